# From QuixBugs (MIT, James Koppel): python_testcases/test_knapsack.py and json_testcases/knapsack.json.
# Cases: lines 0, 2, 4, 6, 8 (0-based) of json_testcases/knapsack.json, as [args, expected].
# The upstream slow case (capacity 6404180, about 4 minutes) is left out.
import unittest

from knapsack import knapsack
from tests._timeout import case_time_limit

CASES = [
    [[100, [[60, 10], [50, 8], [20, 4], [20, 4], [8, 3], [3, 2]]], 19],
    [[750, [[70, 135], [73, 139], [77, 149], [80, 150], [82, 156], [87, 163], [90, 173], [94, 184], [98, 192], [106, 201], [110, 210], [113, 214], [115, 221], [118, 229], [120, 240]]], 1458],
    [[50, [[31, 70], [10, 20], [20, 39], [19, 37], [4, 7], [3, 5], [6, 10]]], 107],
    [[104, [[25, 350], [35, 400], [45, 450], [5, 20], [25, 70], [3, 8], [2, 5], [2, 5]]], 900],
    [[170, [[41, 442], [50, 525], [49, 511], [59, 593], [55, 546], [57, 564], [60, 617]]], 1735],
]


class TestKnapsack(unittest.TestCase):
    def test_knapsack(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = knapsack(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
