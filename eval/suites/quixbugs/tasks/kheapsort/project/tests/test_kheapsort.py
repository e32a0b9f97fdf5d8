# From QuixBugs (MIT, James Koppel): python_testcases/test_kheapsort.py and json_testcases/kheapsort.json.
# Cases: lines 0, 2 (0-based) of json_testcases/kheapsort.json, as [args, expected].
import unittest

from kheapsort import kheapsort
from tests._timeout import case_time_limit

CASES = [
    [[[1, 2, 3, 4, 5], 0], [1, 2, 3, 4, 5]],
    [[[5, 4, 3, 2, 1], 4], [1, 2, 3, 4, 5]],
]


class TestKheapsort(unittest.TestCase):
    def test_kheapsort(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = list(kheapsort(*args))
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
