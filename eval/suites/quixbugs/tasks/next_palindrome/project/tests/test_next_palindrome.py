# From QuixBugs (MIT, James Koppel): python_testcases/test_next_palindrome.py and json_testcases/next_palindrome.json.
# Cases: lines 0, 2, 4 (0-based) of json_testcases/next_palindrome.json, as [args, expected].
import unittest

from next_palindrome import next_palindrome
from tests._timeout import case_time_limit

CASES = [
    [[[1, 4, 9, 4, 1]], [1, 5, 0, 5, 1]],
    [[[4, 7, 2, 5, 5, 2, 7, 4]], [4, 7, 2, 6, 6, 2, 7, 4]],
    [[[9, 9, 9]], [1, 0, 0, 1]],
]


class TestNextPalindrome(unittest.TestCase):
    def test_next_palindrome(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = next_palindrome(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
