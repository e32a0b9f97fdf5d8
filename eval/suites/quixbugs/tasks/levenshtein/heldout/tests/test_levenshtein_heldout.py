# From QuixBugs (MIT, James Koppel): python_testcases/test_levenshtein.py and json_testcases/levenshtein.json.
# Cases: lines 1, 5 (0-based) of json_testcases/levenshtein.json, as [args, expected].
# The upstream slow case (amanaplanacanalpanama, always skipped upstream) is left out.
# The time limit is 10 s: this exponential algorithm needs about 2 s for rosettacode even when correct.
import unittest

from levenshtein import levenshtein
from tests._timeout import case_time_limit

CASES = [
    [['kitten', 'sitting'], 3],
    [['', ''], 0],
]


class TestLevenshteinHeldout(unittest.TestCase):
    def test_levenshtein_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit(seconds=10):
                    result = levenshtein(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
