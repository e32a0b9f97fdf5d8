"""A tiny shopping cart."""


class Item:
    def __init__(self, name, price, qty=1):
        self.name = name
        self.price = price
        self.qty = qty


def total(items):
    """What the cart costs: each item's price times its quantity, summed."""
    return sum(item.qty for item in items)


def count(items):
    """How many things are in the cart."""
    return sum(item.qty for item in items)
