import unittest

from cart import Item, count, total


class TestCart(unittest.TestCase):
    def test_total(self):
        items = [Item("apple", 10, qty=3)]
        self.assertEqual(total(items), 30)

    def test_empty_cart_costs_nothing(self):
        self.assertEqual(total([]), 0)

    def test_count(self):
        items = [Item("apple", 10, qty=3), Item("pear", 5)]
        self.assertEqual(count(items), 4)


if __name__ == "__main__":
    unittest.main()
