# From QuixBugs (MIT, James Koppel): python_testcases/test_powerset.py and json_testcases/powerset.json.
# Cases: lines 1, 3 (0-based) of json_testcases/powerset.json, as [args, expected].
import unittest

from powerset import powerset
from tests._timeout import case_time_limit

CASES = [
    [[['a', 'b']], [[], ['b'], ['a'], ['a', 'b']]],
    [[[]], [[]]],
]


class TestPowersetHeldout(unittest.TestCase):
    def test_powerset_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = powerset(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
