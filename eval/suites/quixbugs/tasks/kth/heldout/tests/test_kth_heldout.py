# From QuixBugs (MIT, James Koppel): python_testcases/test_kth.py and json_testcases/kth.json.
# Cases: lines 1, 3, 5 (0-based) of json_testcases/kth.json, as [args, expected].
import unittest

from kth import kth
from tests._timeout import case_time_limit

CASES = [
    [[[3, 6, 7, 1, 6, 3, 8, 9], 5], 7],
    [[[2, 6, 8, 3, 5, 7], 0], 2],
    [[[45, 2, 6, 8, 42, 90, 322], 1], 6],
]


class TestKthHeldout(unittest.TestCase):
    def test_kth_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = kth(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
