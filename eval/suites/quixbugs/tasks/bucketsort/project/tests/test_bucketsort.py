# From QuixBugs (MIT, James Koppel): python_testcases/test_bucketsort.py and json_testcases/bucketsort.json.
# Cases: lines 0, 2, 4, 6 (0-based) of json_testcases/bucketsort.json, as [args, expected].
import unittest

from bucketsort import bucketsort
from tests._timeout import case_time_limit

CASES = [
    [[[], 14], []],
    [[[3, 2, 4, 2, 3, 5], 6], [2, 2, 3, 3, 4, 5]],
    [[[20, 19, 18, 17, 16, 15, 14, 13, 12, 11], 21], [11, 12, 13, 14, 15, 16, 17, 18, 19, 20]],
    [[[8, 5, 3, 1, 9, 6, 0, 7, 4, 2, 5], 10], [0, 1, 2, 3, 4, 5, 5, 6, 7, 8, 9]],
]


class TestBucketsort(unittest.TestCase):
    def test_bucketsort(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = bucketsort(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
