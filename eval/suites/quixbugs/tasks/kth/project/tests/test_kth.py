# From QuixBugs (MIT, James Koppel): python_testcases/test_kth.py and json_testcases/kth.json.
# Cases: lines 0, 2, 4, 6 (0-based) of json_testcases/kth.json, as [args, expected].
import unittest

from kth import kth
from tests._timeout import case_time_limit

CASES = [
    [[[1, 2, 3, 4, 5, 6, 7], 4], 5],
    [[[3, 6, 7, 1, 6, 3, 8, 9], 2], 3],
    [[[34, 25, 7, 1, 9], 4], 34],
    [[[45, 2, 6, 8, 42, 90, 322], 6], 322],
]


class TestKth(unittest.TestCase):
    def test_kth(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = kth(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
