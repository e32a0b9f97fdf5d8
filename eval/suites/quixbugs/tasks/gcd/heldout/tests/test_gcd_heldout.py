# From QuixBugs (MIT, James Koppel): python_testcases/test_gcd.py and json_testcases/gcd.json.
# Cases: lines 1, 3, 5 (0-based) of json_testcases/gcd.json, as [args, expected].
import unittest

from gcd import gcd
from tests._timeout import case_time_limit

CASES = [
    [[13, 13], 13],
    [[20, 100], 20],
    [[3, 12], 3],
]


class TestGcdHeldout(unittest.TestCase):
    def test_gcd_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = gcd(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
