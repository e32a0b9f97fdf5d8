# From QuixBugs (MIT, James Koppel): python_testcases/test_get_factors.py and json_testcases/get_factors.json.
# Cases: lines 1, 3, 5, 7, 9 (0-based) of json_testcases/get_factors.json, as [args, expected].
import unittest

from get_factors import get_factors
from tests._timeout import case_time_limit

CASES = [
    [[100], [2, 2, 5, 5]],
    [[104], [2, 2, 2, 13]],
    [[3], [3]],
    [[63], [3, 3, 7]],
    [[73], [73]],
]


class TestGetFactorsHeldout(unittest.TestCase):
    def test_get_factors_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = get_factors(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
