# From QuixBugs (MIT, James Koppel): python_testcases/test_find_first_in_sorted.py and json_testcases/find_first_in_sorted.json.
# Cases: lines 1, 3, 5 (0-based) of json_testcases/find_first_in_sorted.json, as [args, expected].
import unittest

from find_first_in_sorted import find_first_in_sorted
from tests._timeout import case_time_limit

CASES = [
    [[[3, 4, 5, 5, 5, 5, 6], 7], -1],
    [[[3, 6, 7, 9, 9, 10, 14, 27], 14], 6],
    [[[0, 1, 6, 8, 13, 14, 67, 128], 67], 6],
]


class TestFindFirstInSortedHeldout(unittest.TestCase):
    def test_find_first_in_sorted_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = find_first_in_sorted(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
