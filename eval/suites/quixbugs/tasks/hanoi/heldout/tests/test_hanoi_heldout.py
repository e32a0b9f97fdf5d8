# From QuixBugs (MIT, James Koppel): python_testcases/test_hanoi.py and json_testcases/hanoi.json.
# Cases: lines 1, 3, 5, 7 (0-based) of json_testcases/hanoi.json, as [args, expected].
# The expected moves are (from, to) tuples, as hanoi returns them (JSON can only store lists).
import unittest

from hanoi import hanoi
from tests._timeout import case_time_limit

CASES = [
    [[1, 1, 3], [(1, 3)]],
    [[3, 1, 3], [(1, 3), (1, 2), (3, 2), (1, 3), (2, 1), (2, 3), (1, 3)]],
    [[2, 1, 2], [(1, 3), (1, 2), (3, 2)]],
    [[2, 3, 1], [(3, 2), (3, 1), (2, 1)]],
]


class TestHanoiHeldout(unittest.TestCase):
    def test_hanoi_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = hanoi(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
