# From QuixBugs (MIT, James Koppel): python_testcases/test_find_in_sorted.py and json_testcases/find_in_sorted.json.
# Cases: lines 1, 3, 5 (0-based) of json_testcases/find_in_sorted.json, as [args, expected].
import unittest

from find_in_sorted import find_in_sorted
from tests._timeout import case_time_limit

CASES = [
    [[[1, 2, 3, 4, 6, 7, 8], 5], -1],
    [[[2, 4, 6, 8, 10, 12, 14, 16, 18, 20], 18], 8],
    [[[3, 5, 6, 7, 8, 9, 12, 12, 14, 24, 26, 27], 12], 6],
]


class TestFindInSortedHeldout(unittest.TestCase):
    def test_find_in_sorted_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = find_in_sorted(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
