# From QuixBugs (MIT, James Koppel): python_testcases/test_detect_cycle.py.
# Cases: test5, test6 of python_testcases/test_detect_cycle.py (subTest case=N is upstream testN).
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


class TestDetectCycleHeldout(unittest.TestCase):
    def test_detect_cycle_heldout(self):
        with self.subTest(case=5):  # Single node
            node = Node(0)
            with case_time_limit():
                detected = detect_cycle(node)
            self.assertFalse(detected)

        with self.subTest(case=6):  # Cycle not starting at the head (1 -> 2)
            node1, node2, node3, node4, node5 = make_list()
            node1.successor = node2
            with case_time_limit():
                detected = detect_cycle(node5)
            self.assertTrue(detected)


if __name__ == "__main__":
    unittest.main()
