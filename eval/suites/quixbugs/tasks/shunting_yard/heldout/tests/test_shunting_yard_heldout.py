# From QuixBugs (MIT, James Koppel): python_testcases/test_shunting_yard.py and json_testcases/shunting_yard.json.
# Cases: lines 1, 3, 5 (0-based) of json_testcases/shunting_yard.json, as [args, expected].
import unittest

from shunting_yard import shunting_yard
from tests._timeout import case_time_limit

CASES = [
    [[[30]], [30]],
    [[[34, '-', 12, '/', 5]], [34, 12, 5, '/', '-']],
    [[[7, '*', 43, '-', 7, '+', 13, '/', 7]], [7, 43, '*', 7, '-', 13, 7, '/', '+']],
]


class TestShuntingYardHeldout(unittest.TestCase):
    def test_shunting_yard_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = shunting_yard(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
