# From QuixBugs (MIT, James Koppel): python_testcases/test_breadth_first_search.py.
# Cases: test1, test2, test3 of python_testcases/test_breadth_first_search.py (subTest case=N is upstream testN).
import unittest

from node import Node
from breadth_first_search import breadth_first_search
from tests._timeout import case_time_limit


class TestBreadthFirstSearch(unittest.TestCase):
    def test_breadth_first_search(self):
        with self.subTest(case=1):  # Strongly connected graph
            station1 = Node("Westminster")
            station2 = Node("Waterloo", None, [station1])
            station3 = Node("Trafalgar Square", None, [station1, station2])
            station4 = Node("Canary Wharf", None, [station2, station3])
            station5 = Node("London Bridge", None, [station4, station3])
            station6 = Node("Tottenham Court Road", None, [station5, station4])
            with case_time_limit():
                path_found = breadth_first_search(station6, station1)
            self.assertTrue(path_found)

        with self.subTest(case=2):  # Branching graph
            nodef = Node("F")
            nodee = Node("E")
            noded = Node("D")
            nodec = Node("C", None, [nodef])
            nodeb = Node("B", None, [nodee])
            nodea = Node("A", None, [nodeb, nodec, noded])
            with case_time_limit():
                path_found = breadth_first_search(nodea, nodee)
            self.assertTrue(path_found)

        with self.subTest(case=3):  # Two unconnected nodes in graph
            nodef = Node("F")
            nodee = Node("E")
            with case_time_limit():
                path_found = breadth_first_search(nodef, nodee)
            self.assertFalse(path_found)


if __name__ == "__main__":
    unittest.main()
