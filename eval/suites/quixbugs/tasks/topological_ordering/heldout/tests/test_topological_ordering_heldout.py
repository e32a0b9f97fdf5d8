# From QuixBugs (MIT, James Koppel): python_testcases/test_topological_ordering.py.
# Cases: test3 of python_testcases/test_topological_ordering.py (subTest case=N is upstream testN).
import unittest

from node import Node
from topological_ordering import topological_ordering
from tests._timeout import case_time_limit


class TestTopologicalOrderingHeldout(unittest.TestCase):
    def test_topological_ordering_heldout(self):
        with self.subTest(case=3):  # Cooking with InteractivePython
            milk = Node("3/4 cup milk")
            egg = Node("1 egg")
            oil = Node("1 Tbl oil")
            mix = Node("1 cup mix")
            syrup = Node("heat syrup")
            griddle = Node("heat griddle")
            pour = Node("pour 1/4 cup")
            turn = Node("turn when bubbly")
            eat = Node("eat")

            milk.outgoing_nodes = [mix]
            egg.outgoing_nodes = [mix]
            oil.outgoing_nodes = [mix]
            mix.incoming_nodes = [milk, egg, oil]
            mix.outgoing_nodes = [syrup, pour]
            griddle.outgoing_nodes = [pour]
            pour.incoming_nodes = [mix, griddle]
            pour.outgoing_nodes = [turn]
            turn.incoming_nodes = [pour]
            turn.outgoing_nodes = [eat]
            syrup.incoming_nodes = [mix]
            syrup.outgoing_nodes = [eat]
            eat.incoming_nodes = [syrup, turn]

            with case_time_limit():
                result = [
                    x.value
                    for x in topological_ordering(
                        [milk, egg, oil, mix, syrup, griddle, pour, turn, eat]
                    )
                ]
            expected = [
                "3/4 cup milk",
                "1 egg",
                "1 Tbl oil",
                "heat griddle",
                "1 cup mix",
                "pour 1/4 cup",
                "heat syrup",
                "turn when bubbly",
                "eat",
            ]
            self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
