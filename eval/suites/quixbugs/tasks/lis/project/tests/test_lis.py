# From QuixBugs (MIT, James Koppel): python_testcases/test_lis.py and json_testcases/lis.json.
# Cases: lines 0, 2, 4, 6, 8, 10 (0-based) of json_testcases/lis.json, as [args, expected].
import unittest

from lis import lis
from tests._timeout import case_time_limit

CASES = [
    [[[]], 0],
    [[[10, 20, 11, 32, 22, 48, 43]], 4],
    [[[5, 1, 3, 4, 7]], 4],
    [[[-1, 0, 2]], 3],
    [[[4, 1, 5, 3, 7, 6, 2]], 3],
    [[[7, 10, 9, 2, 3, 8, 1]], 3],
]


class TestLis(unittest.TestCase):
    def test_lis(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = lis(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
