# From QuixBugs (MIT, James Koppel): python_testcases/test_lis.py and json_testcases/lis.json.
# Cases: lines 1, 3, 5, 7, 9, 11 (0-based) of json_testcases/lis.json, as [args, expected].
import unittest

from lis import lis
from tests._timeout import case_time_limit

CASES = [
    [[[3]], 1],
    [[[4, 2, 1]], 1],
    [[[4, 1]], 1],
    [[[0, 2]], 2],
    [[[10, 22, 9, 33, 21, 50, 41, 60, 80]], 6],
    [[[9, 11, 2, 13, 7, 15]], 4],
]


class TestLisHeldout(unittest.TestCase):
    def test_lis_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = lis(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
