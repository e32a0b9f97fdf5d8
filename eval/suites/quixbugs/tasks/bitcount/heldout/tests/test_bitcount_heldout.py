# From QuixBugs (MIT, James Koppel): python_testcases/test_bitcount.py and json_testcases/bitcount.json.
# Cases: lines 1, 3, 5, 7 (0-based) of json_testcases/bitcount.json, as [args, expected].
import unittest

from bitcount import bitcount
from tests._timeout import case_time_limit

CASES = [
    [[128], 1],
    [[13], 3],
    [[27], 4],
    [[254], 7],
]


class TestBitcountHeldout(unittest.TestCase):
    def test_bitcount_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = bitcount(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
