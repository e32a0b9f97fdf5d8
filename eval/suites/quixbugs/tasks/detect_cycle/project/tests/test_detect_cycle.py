# From QuixBugs (MIT, James Koppel): python_testcases/test_detect_cycle.py.
# Cases: test1, test2, test3, test4 of python_testcases/test_detect_cycle.py (subTest case=N is upstream testN).
import unittest

from node import Node
from detect_cycle import detect_cycle
from tests._timeout import case_time_limit


def make_list():
    """The list 5 -> 4 -> 3 -> 2 -> 1 of the original tests, built fresh for each case."""
    node1 = Node(1)
    node2 = Node(2, node1)
    node3 = Node(3, node2)
    node4 = Node(4, node3)
    node5 = Node(5, node4)
    return node1, node2, node3, node4, node5


class TestDetectCycle(unittest.TestCase):
    def test_detect_cycle(self):
        with self.subTest(case=1):  # Linked list without a cycle
            node1, node2, node3, node4, node5 = make_list()
            with case_time_limit():
                detected = detect_cycle(node5)
            self.assertFalse(detected)

        with self.subTest(case=2):  # Cyclic linked list (1 -> 5)
            node1, node2, node3, node4, node5 = make_list()
            node1.successor = node5
            with case_time_limit():
                detected = detect_cycle(node5)
            self.assertTrue(detected)

        with self.subTest(case=3):  # Two-node cycle (2 -> 1 -> 2)
            node1, node2, node3, node4, node5 = make_list()
            node1.successor = node2
            with case_time_limit():
                detected = detect_cycle(node2)
            self.assertTrue(detected)

        with self.subTest(case=4):  # Two-node list without a cycle
            node6 = Node(6)
            node7 = Node(7, node6)
            with case_time_limit():
                detected = detect_cycle(node7)
            self.assertFalse(detected)


if __name__ == "__main__":
    unittest.main()
