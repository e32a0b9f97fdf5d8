# From QuixBugs (MIT, James Koppel): python_testcases/test_bucketsort.py and json_testcases/bucketsort.json.
# Cases: lines 1, 3, 5 (0-based) of json_testcases/bucketsort.json, as [args, expected].
import unittest

from bucketsort import bucketsort
from tests._timeout import case_time_limit

CASES = [
    [[[3, 11, 2, 9, 1, 5], 12], [1, 2, 3, 5, 9, 11]],
    [[[1, 3, 4, 6, 4, 2, 9, 1, 2, 9], 10], [1, 1, 2, 2, 3, 4, 4, 6, 9, 9]],
    [[[20, 21, 22, 23, 24, 25, 26, 27, 28, 29], 30], [20, 21, 22, 23, 24, 25, 26, 27, 28, 29]],
]


class TestBucketsortHeldout(unittest.TestCase):
    def test_bucketsort_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = bucketsort(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
