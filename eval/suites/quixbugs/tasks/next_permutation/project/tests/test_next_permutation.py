# From QuixBugs (MIT, James Koppel): python_testcases/test_next_permutation.py and json_testcases/next_permutation.json.
# Cases: lines 0, 2, 4, 6 (0-based) of json_testcases/next_permutation.json, as [args, expected].
import unittest

from next_permutation import next_permutation
from tests._timeout import case_time_limit

CASES = [
    [[[3, 2, 4, 1]], [3, 4, 1, 2]],
    [[[3, 5, 6, 2]], [3, 6, 2, 5]],
    [[[4, 5, 8, 7, 1]], [4, 7, 1, 5, 8]],
    [[[44, 5, 1, 7, 9]], [44, 5, 1, 9, 7]],
]


class TestNextPermutation(unittest.TestCase):
    def test_next_permutation(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = next_permutation(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
