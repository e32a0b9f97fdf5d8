# From QuixBugs (MIT, James Koppel): python_testcases/test_to_base.py and json_testcases/to_base.json.
# Cases: lines 1, 3, 5, 7, 9 (0-based) of json_testcases/to_base.json, as [args, expected].
import unittest

from to_base import to_base
from tests._timeout import case_time_limit

CASES = [
    [[73, 8], '111'],
    [[31, 16], '1F'],
    [[44, 5], '134'],
    [[56, 23], '2A'],
    [[8237, 34], '749'],
]


class TestToBaseHeldout(unittest.TestCase):
    def test_to_base_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = to_base(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
