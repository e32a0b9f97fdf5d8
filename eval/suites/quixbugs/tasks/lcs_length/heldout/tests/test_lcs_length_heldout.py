# From QuixBugs (MIT, James Koppel): python_testcases/test_lcs_length.py and json_testcases/lcs_length.json.
# Cases: lines 1, 3, 5, 7 (0-based) of json_testcases/lcs_length.json, as [args, expected].
import unittest

from lcs_length import lcs_length
from tests._timeout import case_time_limit

CASES = [
    [['meow', 'homeowner'], 4],
    [['fun', 'function'], 3],
    [['physics', 'physics'], 7],
    [['flippy', 'floppy'], 3],
]


class TestLcsLengthHeldout(unittest.TestCase):
    def test_lcs_length_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = lcs_length(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
