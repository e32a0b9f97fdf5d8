# From QuixBugs (MIT, James Koppel): python_testcases/test_max_sublist_sum.py and json_testcases/max_sublist_sum.json.
# Cases: lines 1, 3, 5 (0-based) of json_testcases/max_sublist_sum.json, as [args, expected].
import unittest

from max_sublist_sum import max_sublist_sum
from tests._timeout import case_time_limit

CASES = [
    [[[0, -1, 2, -1, 3, -1, 0]], 4],
    [[[4, -2, -8, 5, -2, 7, 7, 2, -6, 5]], 19],
    [[[-2, 1, -3, 4, -1, 2, 1, -5, 4]], 6],
]


class TestMaxSublistSumHeldout(unittest.TestCase):
    def test_max_sublist_sum_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = max_sublist_sum(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
