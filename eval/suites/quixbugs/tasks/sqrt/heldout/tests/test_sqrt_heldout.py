# From QuixBugs (MIT, James Koppel): python_testcases/test_sqrt.py and json_testcases/sqrt.json.
# Cases: lines 1, 3, 5 (0-based) of json_testcases/sqrt.json, as [args, expected].
# Upstream compares with pytest.approx(expected, abs=epsilon); assertAlmostEqual(delta=epsilon) is the same.
import unittest

from sqrt import sqrt
from tests._timeout import case_time_limit

CASES = [
    [[2, 0.5], 1.5],
    [[4, 0.2], 2],
    [[33, 0.05], 5.744627526262464],
]


class TestSqrtHeldout(unittest.TestCase):
    def test_sqrt_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = sqrt(*args)
                self.assertAlmostEqual(result, expected, delta=args[-1])


if __name__ == "__main__":
    unittest.main()
