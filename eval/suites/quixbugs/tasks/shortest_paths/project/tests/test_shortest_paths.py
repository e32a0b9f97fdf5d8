# From QuixBugs (MIT, James Koppel): python_testcases/test_shortest_paths.py.
# Cases: test1, test2 of python_testcases/test_shortest_paths.py (subTest case=N is upstream testN).
import unittest

from shortest_paths import shortest_paths
from tests._timeout import case_time_limit


class TestShortestPaths(unittest.TestCase):
    def test_shortest_paths(self):
        with self.subTest(case=1):  # Graph with multiple paths
            graph = {
                ("A", "B"): 3,
                ("A", "C"): 3,
                ("A", "F"): 5,
                ("C", "B"): -2,
                ("C", "D"): 7,
                ("C", "E"): 4,
                ("D", "E"): -5,
                ("E", "F"): -1,
            }
            with case_time_limit():
                result = shortest_paths("A", graph)
            self.assertEqual(result, {"A": 0, "C": 3, "B": 1, "E": 5, "D": 10, "F": 4})

        with self.subTest(case=2):  # Graph with one path
            graph2 = {
                ("A", "B"): 1,
                ("B", "C"): 2,
                ("C", "D"): 3,
                ("D", "E"): -1,
                ("E", "F"): 4,
            }
            with case_time_limit():
                result = shortest_paths("A", graph2)
            self.assertEqual(result, {"A": 0, "C": 3, "B": 1, "E": 5, "D": 6, "F": 9})


if __name__ == "__main__":
    unittest.main()
