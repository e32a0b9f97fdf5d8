# From QuixBugs (MIT, James Koppel): python_testcases/test_kheapsort.py and json_testcases/kheapsort.json.
# Cases: lines 1, 3 (0-based) of json_testcases/kheapsort.json, as [args, expected].
import unittest

from kheapsort import kheapsort
from tests._timeout import case_time_limit

CASES = [
    [[[3, 2, 1, 5, 4], 2], [1, 2, 3, 4, 5]],
    [[[3, 12, 5, 1, 6], 3], [1, 3, 5, 6, 12]],
]


class TestKheapsortHeldout(unittest.TestCase):
    def test_kheapsort_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = list(kheapsort(*args))
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
