# From QuixBugs (MIT, James Koppel): python_testcases/test_knapsack.py and json_testcases/knapsack.json.
# Cases: lines 1, 3, 5, 7 (0-based) of json_testcases/knapsack.json, as [args, expected].
# The upstream slow case (capacity 6404180, about 4 minutes) is left out.
import unittest

from knapsack import knapsack
from tests._timeout import case_time_limit

CASES = [
    [[40, [[30, 10], [50, 5], [10, 20], [40, 25]]], 30],
    [[26, [[12, 24], [7, 13], [11, 23], [8, 15], [9, 16]]], 51],
    [[190, [[56, 50], [59, 50], [80, 64], [64, 46], [75, 50], [17, 5]]], 150],
    [[165, [[23, 92], [31, 57], [29, 49], [44, 68], [53, 60], [38, 43], [63, 67], [85, 84], [89, 87], [82, 72]]], 309],
]


class TestKnapsackHeldout(unittest.TestCase):
    def test_knapsack_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = knapsack(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
