# From QuixBugs (MIT, James Koppel): python_testcases/test_shortest_path_lengths.py.
# Cases: test3, test4 of python_testcases/test_shortest_path_lengths.py (subTest case=N is upstream testN).
import unittest

from shortest_path_lengths import shortest_path_lengths
from tests._timeout import case_time_limit


class TestShortestPathLengthsHeldout(unittest.TestCase):
    def test_shortest_path_lengths_heldout(self):
        with self.subTest(case=3):  # Disconnected graphs input
            graph = {
                (0, 1): 3,
                (2, 3): 5,
            }
            with case_time_limit():
                result = shortest_path_lengths(4, graph)
            expected = {
                (0, 0): 0,
                (1, 1): 0,
                (2, 2): 0,
                (3, 3): 0,
                (0, 1): 3,
                (2, 3): 5,
                (0, 2): float("inf"),
                (0, 3): float("inf"),
                (1, 0): float("inf"),
                (1, 2): float("inf"),
                (1, 3): float("inf"),
                (2, 0): float("inf"),
                (2, 1): float("inf"),
                (3, 0): float("inf"),
                (3, 1): float("inf"),
                (3, 2): float("inf"),
            }
            self.assertEqual(result, expected)

        with self.subTest(case=4):  # Strongly connected graph input
            graph = {
                (0, 1): 3,
                (1, 2): 5,
                (2, 0): -1,
            }
            with case_time_limit():
                result = shortest_path_lengths(3, graph)
            expected = {
                (0, 0): 0,
                (1, 1): 0,
                (2, 2): 0,
                (0, 1): 3,
                (1, 2): 5,
                (2, 0): -1,
                (0, 2): 8,
                (1, 0): 4,
                (2, 1): 2,
            }
            self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
