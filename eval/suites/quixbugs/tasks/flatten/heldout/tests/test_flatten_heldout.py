# From QuixBugs (MIT, James Koppel): python_testcases/test_flatten.py and json_testcases/flatten.json.
# Cases: lines 1, 3, 5 (0-based) of json_testcases/flatten.json, as [args, expected].
import unittest

from flatten import flatten
from tests._timeout import case_time_limit

CASES = [
    [[[[], [], [], [], []]], []],
    [[[1, 2, 3, [[4]]]], [1, 2, 3, 4]],
    [[['moe', 'curly', 'larry']], ['moe', 'curly', 'larry']],
]


class TestFlattenHeldout(unittest.TestCase):
    def test_flatten_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = list(flatten(*args))
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
