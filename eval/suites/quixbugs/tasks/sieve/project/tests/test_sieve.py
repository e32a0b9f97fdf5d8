# From QuixBugs (MIT, James Koppel): python_testcases/test_sieve.py and json_testcases/sieve.json.
# Cases: lines 0, 2, 4 (0-based) of json_testcases/sieve.json, as [args, expected].
import unittest

from sieve import sieve
from tests._timeout import case_time_limit

CASES = [
    [[1], []],
    [[4], [2, 3]],
    [[20], [2, 3, 5, 7, 11, 13, 17, 19]],
]


class TestSieve(unittest.TestCase):
    def test_sieve(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = sieve(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
