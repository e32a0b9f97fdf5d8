# From QuixBugs (MIT, James Koppel): python_testcases/test_minimum_spanning_tree.py.
# Cases: test1, test2 of python_testcases/test_minimum_spanning_tree.py (subTest case=N is upstream testN).
import unittest

from minimum_spanning_tree import minimum_spanning_tree
from tests._timeout import case_time_limit


class TestMinimumSpanningTree(unittest.TestCase):
    def test_minimum_spanning_tree(self):
        with self.subTest(case=1):  # Simple tree input
            with case_time_limit():
                result = minimum_spanning_tree({
                    (1, 2): 10,
                    (2, 3): 15,
                    (3, 4): 10,
                    (1, 4): 10,
                })
            self.assertEqual(result, {(1, 2), (3, 4), (1, 4)})

        with self.subTest(case=2):  # Strongly connected tree input
            with case_time_limit():
                result = minimum_spanning_tree({
                    (1, 2): 6,
                    (1, 3): 1,
                    (1, 4): 5,
                    (2, 3): 5,
                    (2, 5): 3,
                    (3, 4): 5,
                    (3, 5): 6,
                    (3, 6): 4,
                    (4, 6): 2,
                    (5, 6): 6,
                })
            self.assertEqual(result, {(2, 5), (1, 3), (2, 3), (4, 6), (3, 6)})


if __name__ == "__main__":
    unittest.main()
