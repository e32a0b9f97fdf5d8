# From QuixBugs (MIT, James Koppel): python_testcases/test_longest_common_subsequence.py and json_testcases/longest_common_subsequence.json.
# Cases: lines 0, 2, 4, 6, 8 (0-based) of json_testcases/longest_common_subsequence.json, as [args, expected].
import unittest

from longest_common_subsequence import longest_common_subsequence
from tests._timeout import case_time_limit

CASES = [
    [['headache', 'pentadactyl'], 'eadac'],
    [['XMJYAUZ', 'MZJAWXU'], 'MJAU'],
    [['1234', '1224533324'], '1234'],
    [['TATAGC', 'TAGCAG'], 'TAAG'],
    [['ABCD', 'XBCYDQ'], 'BCD'],
]


class TestLongestCommonSubsequence(unittest.TestCase):
    def test_longest_common_subsequence(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = longest_common_subsequence(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
