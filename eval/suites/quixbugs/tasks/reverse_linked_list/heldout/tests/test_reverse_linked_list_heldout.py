# From QuixBugs (MIT, James Koppel): python_testcases/test_reverse_linked_list.py.
# Cases: test2, test3 of python_testcases/test_reverse_linked_list.py (subTest case=N is upstream testN).
import unittest

from node import Node
from reverse_linked_list import reverse_linked_list
from tests._timeout import case_time_limit


class TestReverseLinkedListHeldout(unittest.TestCase):
    def test_reverse_linked_list_heldout(self):
        with self.subTest(case=2):  # Single node
            node = Node(0)
            with case_time_limit():
                result = reverse_linked_list(node)
                self.assertEqual(result, node)
                output = []
                while result:
                    output.append(result.value)
                    result = result.successor
            self.assertEqual(output, [0])

        with self.subTest(case=3):  # Empty list
            with case_time_limit():
                result = reverse_linked_list(None)
                self.assertFalse(result)
                output = []
                while result:
                    output.append(result.value)
                    result = result.successor
            self.assertFalse(output)


if __name__ == "__main__":
    unittest.main()
