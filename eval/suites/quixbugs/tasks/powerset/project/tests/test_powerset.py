# From QuixBugs (MIT, James Koppel): python_testcases/test_powerset.py and json_testcases/powerset.json.
# Cases: lines 0, 2, 4 (0-based) of json_testcases/powerset.json, as [args, expected].
import unittest

from powerset import powerset
from tests._timeout import case_time_limit

CASES = [
    [[['a', 'b', 'c']], [[], ['c'], ['b'], ['b', 'c'], ['a'], ['a', 'c'], ['a', 'b'], ['a', 'b', 'c']]],
    [[['a']], [[], ['a']]],
    [[['x', 'df', 'z', 'm']], [[], ['m'], ['z'], ['z', 'm'], ['df'], ['df', 'm'], ['df', 'z'], ['df', 'z', 'm'], ['x'], ['x', 'm'], ['x', 'z'], ['x', 'z', 'm'], ['x', 'df'], ['x', 'df', 'm'], ['x', 'df', 'z'], ['x', 'df', 'z', 'm']]],
]


class TestPowerset(unittest.TestCase):
    def test_powerset(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = powerset(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
