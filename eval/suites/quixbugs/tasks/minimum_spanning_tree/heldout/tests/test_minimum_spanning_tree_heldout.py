# From QuixBugs (MIT, James Koppel): python_testcases/test_minimum_spanning_tree.py.
# Cases: test3 of python_testcases/test_minimum_spanning_tree.py (subTest case=N is upstream testN).
import unittest

from minimum_spanning_tree import minimum_spanning_tree
from tests._timeout import case_time_limit


class TestMinimumSpanningTreeHeldout(unittest.TestCase):
    def test_minimum_spanning_tree_heldout(self):
        with self.subTest(case=3):  # Minimum spanning tree input
            with case_time_limit():
                result = minimum_spanning_tree({
                    (1, 2): 6,
                    (1, 3): 1,
                    (2, 4): 2,
                })
            self.assertEqual(result, {(1, 2), (1, 3), (2, 4)})


if __name__ == "__main__":
    unittest.main()
