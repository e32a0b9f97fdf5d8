# From QuixBugs (MIT, James Koppel): python_testcases/test_find_in_sorted.py and json_testcases/find_in_sorted.json.
# Cases: lines 0, 2, 4, 6 (0-based) of json_testcases/find_in_sorted.json, as [args, expected].
import unittest

from find_in_sorted import find_in_sorted
from tests._timeout import case_time_limit

CASES = [
    [[[3, 4, 5, 5, 5, 5, 6], 5], 3],
    [[[1, 2, 3, 4, 6, 7, 8], 4], 3],
    [[[3, 5, 6, 7, 8, 9, 12, 13, 14, 24, 26, 27], 0], -1],
    [[[24, 26, 28, 50, 59], 101], -1],
]


class TestFindInSorted(unittest.TestCase):
    def test_find_in_sorted(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = find_in_sorted(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
