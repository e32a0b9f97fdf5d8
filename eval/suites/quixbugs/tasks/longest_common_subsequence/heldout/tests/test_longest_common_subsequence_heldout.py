# From QuixBugs (MIT, James Koppel): python_testcases/test_longest_common_subsequence.py and json_testcases/longest_common_subsequence.json.
# Cases: lines 1, 3, 5, 7, 9 (0-based) of json_testcases/longest_common_subsequence.json, as [args, expected].
import unittest

from longest_common_subsequence import longest_common_subsequence
from tests._timeout import case_time_limit

CASES = [
    [['daenarys', 'targaryen'], 'aary'],
    [['thisisatest', 'testing123testing'], 'tsitest'],
    [['abcbdab', 'bdcaba'], 'bcba'],
    [['ABCBDAB', 'BDCABA'], 'BCBA'],
    [['acbdegcedbg', 'begcfeubk'], 'begceb'],
]


class TestLongestCommonSubsequenceHeldout(unittest.TestCase):
    def test_longest_common_subsequence_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = longest_common_subsequence(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
