# From QuixBugs (MIT, James Koppel): python_testcases/test_sieve.py and json_testcases/sieve.json.
# Cases: lines 1, 3, 5 (0-based) of json_testcases/sieve.json, as [args, expected].
import unittest

from sieve import sieve
from tests._timeout import case_time_limit

CASES = [
    [[2], [2]],
    [[7], [2, 3, 5, 7]],
    [[50], [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47]],
]


class TestSieveHeldout(unittest.TestCase):
    def test_sieve_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = sieve(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
