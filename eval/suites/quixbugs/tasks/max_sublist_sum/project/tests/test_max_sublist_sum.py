# From QuixBugs (MIT, James Koppel): python_testcases/test_max_sublist_sum.py and json_testcases/max_sublist_sum.json.
# Cases: lines 0, 2, 4 (0-based) of json_testcases/max_sublist_sum.json, as [args, expected].
import unittest

from max_sublist_sum import max_sublist_sum
from tests._timeout import case_time_limit

CASES = [
    [[[4, -5, 2, 1, -1, 3]], 5],
    [[[3, 4, 5]], 12],
    [[[-4, -4, -5]], 0],
]


class TestMaxSublistSum(unittest.TestCase):
    def test_max_sublist_sum(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = max_sublist_sum(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
