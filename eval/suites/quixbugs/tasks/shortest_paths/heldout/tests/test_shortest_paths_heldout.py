# From QuixBugs (MIT, James Koppel): python_testcases/test_shortest_paths.py.
# Cases: test3 of python_testcases/test_shortest_paths.py (subTest case=N is upstream testN).
import unittest

from shortest_paths import shortest_paths
from tests._timeout import case_time_limit


class TestShortestPathsHeldout(unittest.TestCase):
    def test_shortest_paths_heldout(self):
        with self.subTest(case=3):  # Graph with cycle
            graph3 = {
                ("A", "B"): 1,
                ("B", "C"): 2,
                ("C", "D"): 3,
                ("D", "E"): -1,
                ("E", "D"): 1,
                ("E", "F"): 4,
            }
            with case_time_limit():
                result = shortest_paths("A", graph3)
            self.assertEqual(result, {"A": 0, "C": 3, "B": 1, "E": 5, "D": 6, "F": 9})


if __name__ == "__main__":
    unittest.main()
