# From QuixBugs (MIT, James Koppel): python_testcases/test_next_permutation.py and json_testcases/next_permutation.json.
# Cases: lines 1, 3, 5, 7 (0-based) of json_testcases/next_permutation.json, as [args, expected].
import unittest

from next_permutation import next_permutation
from tests._timeout import case_time_limit

CASES = [
    [[[3, 5, 6, 2, 1]], [3, 6, 1, 2, 5]],
    [[[4, 5, 1, 7, 9]], [4, 5, 1, 9, 7]],
    [[[9, 5, 2, 6, 1]], [9, 5, 6, 1, 2]],
    [[[3, 4, 5]], [3, 5, 4]],
]


class TestNextPermutationHeldout(unittest.TestCase):
    def test_next_permutation_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = next_permutation(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
