# From QuixBugs (MIT, James Koppel): python_testcases/test_possible_change.py and json_testcases/possible_change.json.
# Cases: lines 1, 3, 5, 7, 9 (0-based) of json_testcases/possible_change.json, as [args, expected].
import unittest

from possible_change import possible_change
from tests._timeout import case_time_limit

CASES = [
    [[[1, 5, 10, 25], 11], 4],
    [[[1, 5, 10, 25], 34], 18],
    [[[1, 5, 10, 25], 140], 568],
    [[[1, 5, 10, 25, 50, 100], 140], 817],
    [[[3, 7, 42, 78], 140], 20],
]


class TestPossibleChangeHeldout(unittest.TestCase):
    def test_possible_change_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = possible_change(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
