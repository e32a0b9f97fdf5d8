# From QuixBugs (MIT, James Koppel): python_testcases/test_reverse_linked_list.py.
# Cases: test1 of python_testcases/test_reverse_linked_list.py (subTest case=N is upstream testN).
import unittest

from node import Node
from reverse_linked_list import reverse_linked_list
from tests._timeout import case_time_limit


class TestReverseLinkedList(unittest.TestCase):
    def test_reverse_linked_list(self):
        with self.subTest(case=1):  # Five-node list
            node1 = Node(1)
            node2 = Node(2, node1)
            node3 = Node(3, node2)
            node4 = Node(4, node3)
            node5 = Node(5, node4)
            with case_time_limit():
                result = reverse_linked_list(node5)
                self.assertEqual(result, node1)
                output = []
                while result:
                    output.append(result.value)
                    result = result.successor
            self.assertEqual(output, [1, 2, 3, 4, 5])


if __name__ == "__main__":
    unittest.main()
