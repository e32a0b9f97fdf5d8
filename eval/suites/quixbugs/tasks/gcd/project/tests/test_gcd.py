# From QuixBugs (MIT, James Koppel): python_testcases/test_gcd.py and json_testcases/gcd.json.
# Cases: lines 0, 2, 4 (0-based) of json_testcases/gcd.json, as [args, expected].
import unittest

from gcd import gcd
from tests._timeout import case_time_limit

CASES = [
    [[17, 0], 17],
    [[37, 600], 1],
    [[624129, 2061517], 18913],
]


class TestGcd(unittest.TestCase):
    def test_gcd(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = gcd(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
