# From QuixBugs (MIT, James Koppel): python_testcases/test_to_base.py and json_testcases/to_base.json.
# Cases: lines 0, 2, 4, 6, 8 (0-based) of json_testcases/to_base.json, as [args, expected].
import unittest

from to_base import to_base
from tests._timeout import case_time_limit

CASES = [
    [[8227, 18], '1771'],
    [[16, 19], 'G'],
    [[41, 2], '101001'],
    [[27, 23], '14'],
    [[8237, 24], 'E75'],
]


class TestToBase(unittest.TestCase):
    def test_to_base(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = to_base(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
