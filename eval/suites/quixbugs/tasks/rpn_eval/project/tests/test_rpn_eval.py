# From QuixBugs (MIT, James Koppel): python_testcases/test_rpn_eval.py and json_testcases/rpn_eval.json.
# Cases: lines 0, 2, 4 (0-based) of json_testcases/rpn_eval.json, as [args, expected].
import unittest

from rpn_eval import rpn_eval
from tests._timeout import case_time_limit

CASES = [
    [[[3.0, 5.0, '+', 2.0, '/']], 4.0],
    [[[7.0, 4.0, '+', 3.0, '-']], 8.0],
    [[[5.0, 9.0, 2.0, '*', '+']], 23.0],
]


class TestRpnEval(unittest.TestCase):
    def test_rpn_eval(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = rpn_eval(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
