# From QuixBugs (MIT, James Koppel): python_testcases/test_next_palindrome.py and json_testcases/next_palindrome.json.
# Cases: lines 1, 3 (0-based) of json_testcases/next_palindrome.json, as [args, expected].
import unittest

from next_palindrome import next_palindrome
from tests._timeout import case_time_limit

CASES = [
    [[[1, 3, 1]], [1, 4, 1]],
    [[[4, 7, 2, 5, 2, 7, 4]], [4, 7, 2, 6, 2, 7, 4]],
]


class TestNextPalindromeHeldout(unittest.TestCase):
    def test_next_palindrome_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = next_palindrome(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
