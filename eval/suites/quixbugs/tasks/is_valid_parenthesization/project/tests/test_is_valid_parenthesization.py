# From QuixBugs (MIT, James Koppel): python_testcases/test_is_valid_parenthesization.py and json_testcases/is_valid_parenthesization.json.
# Cases: lines 0, 2 (0-based) of json_testcases/is_valid_parenthesization.json, as [args, expected].
import unittest

from is_valid_parenthesization import is_valid_parenthesization
from tests._timeout import case_time_limit

CASES = [
    [['((()()))()'], True],
    [['(('], False],
]


class TestIsValidParenthesization(unittest.TestCase):
    def test_is_valid_parenthesization(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = is_valid_parenthesization(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
