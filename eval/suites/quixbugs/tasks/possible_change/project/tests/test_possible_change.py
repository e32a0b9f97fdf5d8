# From QuixBugs (MIT, James Koppel): python_testcases/test_possible_change.py and json_testcases/possible_change.json.
# Cases: lines 0, 2, 4, 6, 8 (0-based) of json_testcases/possible_change.json, as [args, expected].
import unittest

from possible_change import possible_change
from tests._timeout import case_time_limit

CASES = [
    [[[1, 4, 2], -7], 0],
    [[[1, 5, 10, 25], 75], 121],
    [[[1, 5, 10], 34], 16],
    [[[1, 5, 10, 25, 50], 140], 786],
    [[[1, 3, 7, 42, 78], 140], 981],
]


class TestPossibleChange(unittest.TestCase):
    def test_possible_change(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = possible_change(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
