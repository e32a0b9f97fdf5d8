# From QuixBugs (MIT, James Koppel): python_testcases/test_topological_ordering.py.
# Cases: test1, test2 of python_testcases/test_topological_ordering.py (subTest case=N is upstream testN).
import unittest

from node import Node
from topological_ordering import topological_ordering
from tests._timeout import case_time_limit


class TestTopologicalOrdering(unittest.TestCase):
    def test_topological_ordering(self):
        with self.subTest(case=1):  # Wikipedia graph
            five = Node(5)
            seven = Node(7)
            three = Node(3)
            eleven = Node(11)
            eight = Node(8)
            two = Node(2)
            nine = Node(9)
            ten = Node(10)

            five.outgoing_nodes = [eleven]
            seven.outgoing_nodes = [eleven, eight]
            three.outgoing_nodes = [eight, ten]
            eleven.incoming_nodes = [five, seven]
            eleven.outgoing_nodes = [two, nine, ten]
            eight.incoming_nodes = [seven, three]
            eight.outgoing_nodes = [nine]
            two.incoming_nodes = [eleven]
            nine.incoming_nodes = [eleven, eight]
            ten.incoming_nodes = [eleven, three]

            with case_time_limit():
                result = [
                    x.value
                    for x in topological_ordering(
                        [five, seven, three, eleven, eight, two, nine, ten]
                    )
                ]
            self.assertEqual(result, [5, 7, 3, 11, 8, 10, 2, 9])

        with self.subTest(case=2):  # GeekforGeeks example
            five = Node(5)
            zero = Node(0)
            four = Node(4)
            one = Node(1)
            two = Node(2)
            three = Node(3)

            five.outgoing_nodes = [two, zero]
            four.outgoing_nodes = [zero, one]
            two.incoming_nodes = [five]
            two.outgoing_nodes = [three]
            zero.incoming_nodes = [five, four]
            one.incoming_nodes = [four, three]
            three.incoming_nodes = [two]
            three.outgoing_nodes = [one]

            with case_time_limit():
                result = [
                    x.value for x in topological_ordering([zero, one, two, three, four, five])
                ]
            self.assertEqual(result, [4, 5, 0, 2, 3, 1])


if __name__ == "__main__":
    unittest.main()
