# From QuixBugs (MIT, James Koppel): python_testcases/test_shortest_path_length.py.
# Cases: test2, test3, test4 of python_testcases/test_shortest_path_length.py (subTest case=N is upstream testN).
import unittest

from node import Node
from shortest_path_length import shortest_path_length
from tests._timeout import case_time_limit


node1 = Node("1")
node5 = Node("5")
node4 = Node("4", None, [node5])
node3 = Node("3", None, [node4])
node2 = Node("2", None, [node1, node3, node4])
node0 = Node("0", None, [node2, node5])

length_by_edge = {
    (node0, node2): 3,
    (node0, node5): 10,
    (node2, node1): 1,
    (node2, node3): 2,
    (node2, node4): 4,
    (node3, node4): 1,
    (node4, node5): 1,
}


class TestShortestPathLengthHeldout(unittest.TestCase):
    def test_shortest_path_length_heldout(self):
        with self.subTest(case=2):  # From node0 to node5 (expected 7)
            with case_time_limit():
                result = shortest_path_length(length_by_edge, node0, node5)
            self.assertEqual(result, 7)

        with self.subTest(case=3):  # From node2 to node2 (expected 0)
            with case_time_limit():
                result = shortest_path_length(length_by_edge, node2, node2)
            self.assertEqual(result, 0)

        with self.subTest(case=4):  # From node1 to node5 (unreachable)
            with case_time_limit():
                result = shortest_path_length(length_by_edge, node1, node5)
            self.assertEqual(result, float("inf"))


if __name__ == "__main__":
    unittest.main()
