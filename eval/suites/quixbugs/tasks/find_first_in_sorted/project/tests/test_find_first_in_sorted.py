# From QuixBugs (MIT, James Koppel): python_testcases/test_find_first_in_sorted.py and json_testcases/find_first_in_sorted.json.
# Cases: lines 0, 2, 4, 6 (0-based) of json_testcases/find_first_in_sorted.json, as [args, expected].
import unittest

from find_first_in_sorted import find_first_in_sorted
from tests._timeout import case_time_limit

CASES = [
    [[[3, 4, 5, 5, 5, 5, 6], 5], 2],
    [[[3, 4, 5, 5, 5, 5, 6], 2], -1],
    [[[0, 1, 6, 8, 13, 14, 67, 128], 80], -1],
    [[[0, 1, 6, 8, 13, 14, 67, 128], 128], 7],
]


class TestFindFirstInSorted(unittest.TestCase):
    def test_find_first_in_sorted(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = find_first_in_sorted(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
