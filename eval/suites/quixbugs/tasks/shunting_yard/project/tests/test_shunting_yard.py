# From QuixBugs (MIT, James Koppel): python_testcases/test_shunting_yard.py and json_testcases/shunting_yard.json.
# Cases: lines 0, 2, 4 (0-based) of json_testcases/shunting_yard.json, as [args, expected].
import unittest

from shunting_yard import shunting_yard
from tests._timeout import case_time_limit

CASES = [
    [[[]], []],
    [[[10, '-', 5, '-', 2]], [10, 5, '-', 2, '-']],
    [[[4, '+', 9, '*', 9, '-', 10, '+', 13]], [4, 9, 9, '*', '+', 10, '-', 13, '+']],
]


class TestShuntingYard(unittest.TestCase):
    def test_shunting_yard(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = shunting_yard(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
