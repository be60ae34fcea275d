"""Small calculator helpers used by the billing scripts."""

import math


def mean(values):
    total = 0
    for v in values:
        total += v
    return total / len(values)


def median(values):
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2 == 1:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def stddev(values):
    m = mean(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / len(values))


class Invoice:
    def __init__(self, customer, lines=None):
        self.customer = customer
        self.lines = lines or []

    def add(self, description, amount, quantity=1):
        self.lines.append((description, amount, quantity))

    def total(self, tax_rate=0.0):
        subtotal = sum(amount * quantity for _, amount, quantity in self.lines)
        return round(subtotal * (1 + tax_rate), 2)
