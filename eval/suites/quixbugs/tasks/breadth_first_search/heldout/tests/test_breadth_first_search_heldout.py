# From QuixBugs (MIT, James Koppel): python_testcases/test_breadth_first_search.py.
# Cases: test4, test5 of python_testcases/test_breadth_first_search.py (subTest case=N is upstream testN).
import unittest

from node import Node
from breadth_first_search import breadth_first_search
from tests._timeout import case_time_limit


class TestBreadthFirstSearchHeldout(unittest.TestCase):
    def test_breadth_first_search_heldout(self):
        with self.subTest(case=4):  # One node graph
            nodef = Node("F")
            with case_time_limit():
                path_found = breadth_first_search(nodef, nodef)
            self.assertTrue(path_found)

        with self.subTest(case=5):  # Graph with cycles
            nodef = Node("F")
            nodee = Node("E")
            noded = Node("D")
            nodec = Node("C", None, [nodef])
            nodeb = Node("B", None, [nodee])
            nodea = Node("A", None, [nodeb, nodec, noded])
            nodee.successors = [nodea]
            with case_time_limit():
                path_found = breadth_first_search(nodea, nodef)
            self.assertTrue(path_found)


if __name__ == "__main__":
    unittest.main()
