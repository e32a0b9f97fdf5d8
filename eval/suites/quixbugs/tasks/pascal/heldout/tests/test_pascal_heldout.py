# From QuixBugs (MIT, James Koppel): python_testcases/test_pascal.py and json_testcases/pascal.json.
# Cases: lines 1, 3 (0-based) of json_testcases/pascal.json, as [args, expected].
import unittest

from pascal import pascal
from tests._timeout import case_time_limit

CASES = [
    [[2], [[1], [1, 1]]],
    [[4], [[1], [1, 1], [1, 2, 1], [1, 3, 3, 1]]],
]


class TestPascalHeldout(unittest.TestCase):
    def test_pascal_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = pascal(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
