# From QuixBugs (MIT, James Koppel): python_testcases/test_get_factors.py and json_testcases/get_factors.json.
# Cases: lines 0, 2, 4, 6, 8, 10 (0-based) of json_testcases/get_factors.json, as [args, expected].
import unittest

from get_factors import get_factors
from tests._timeout import case_time_limit

CASES = [
    [[1], []],
    [[101], [101]],
    [[2], [2]],
    [[17], [17]],
    [[74], [2, 37]],
    [[9837], [3, 3, 1093]],
]


class TestGetFactors(unittest.TestCase):
    def test_get_factors(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = get_factors(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
