# From QuixBugs (MIT, James Koppel): python_testcases/test_bitcount.py and json_testcases/bitcount.json.
# Cases: lines 0, 2, 4, 6, 8 (0-based) of json_testcases/bitcount.json, as [args, expected].
import unittest

from bitcount import bitcount
from tests._timeout import case_time_limit

CASES = [
    [[127], 7],
    [[3005], 9],
    [[14], 3],
    [[834], 4],
    [[256], 1],
]


class TestBitcount(unittest.TestCase):
    def test_bitcount(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = bitcount(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
