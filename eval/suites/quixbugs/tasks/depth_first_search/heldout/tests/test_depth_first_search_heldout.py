# From QuixBugs (MIT, James Koppel): python_testcases/test_depth_first_search.py.
# Cases: test4 of python_testcases/test_depth_first_search.py (subTest case=N is upstream testN).
import unittest

from node import Node
from depth_first_search import depth_first_search
from tests._timeout import case_time_limit


class TestDepthFirstSearchHeldout(unittest.TestCase):
    def test_depth_first_search_heldout(self):
        with self.subTest(case=4):  # One node graph
            nodef = Node("F")
            with case_time_limit():
                path_found = depth_first_search(nodef, nodef)
            self.assertTrue(path_found)


if __name__ == "__main__":
    unittest.main()
