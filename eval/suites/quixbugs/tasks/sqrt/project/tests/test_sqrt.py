# From QuixBugs (MIT, James Koppel): python_testcases/test_sqrt.py and json_testcases/sqrt.json.
# Cases: lines 0, 2, 4, 6 (0-based) of json_testcases/sqrt.json, as [args, expected].
# Upstream compares with pytest.approx(expected, abs=epsilon); assertAlmostEqual(delta=epsilon) is the same.
import unittest

from sqrt import sqrt
from tests._timeout import case_time_limit

CASES = [
    [[2, 0.01], 1.4166666666666665],
    [[2, 0.3], 1.5],
    [[27, 0.01], 5.196164639727311],
    [[170, 0.03], 13.038404876679632],
]


class TestSqrt(unittest.TestCase):
    def test_sqrt(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = sqrt(*args)
                self.assertAlmostEqual(result, expected, delta=args[-1])


if __name__ == "__main__":
    unittest.main()
