# From QuixBugs (MIT, James Koppel): python_testcases/test_quicksort.py and json_testcases/quicksort.json.
# Cases: lines 3, 5, 7, 9, 11 (0-based) of json_testcases/quicksort.json, as [args, expected].
import unittest

from quicksort import quicksort
from tests._timeout import case_time_limit

CASES = [
    [[[5, 4, 3, 1, 2]], [1, 2, 3, 4, 5]],
    [[[9, 4, 5, 2, 17, 14, 10, 6, 15, 8, 12, 13, 16, 3, 1, 7, 11]], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]],
    [[[8, 5, 15, 7, 9, 14, 11, 12, 10, 6, 2, 4, 13, 1, 3]], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]],
    [[[4, 3, 1, 5, 2]], [1, 2, 3, 4, 5]],
    [[[10, 16, 6, 1, 14, 19, 15, 2, 9, 4, 18, 17, 12, 3, 11, 8, 13, 5, 7]], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]],
]


class TestQuicksortHeldout(unittest.TestCase):
    def test_quicksort_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = quicksort(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
