# From QuixBugs (MIT, James Koppel): python_testcases/test_lcs_length.py and json_testcases/lcs_length.json.
# Cases: lines 0, 2, 4, 6, 8 (0-based) of json_testcases/lcs_length.json, as [args, expected].
import unittest

from lcs_length import lcs_length
from tests._timeout import case_time_limit

CASES = [
    [['witch', 'sandwich'], 2],
    [['fun', ''], 0],
    [['cyborg', 'cyber'], 3],
    [['space age', 'pace a'], 6],
    [['acbdegcedbg', 'begcfeubk'], 3],
]


class TestLcsLength(unittest.TestCase):
    def test_lcs_length(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = lcs_length(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
