"""Shapes fixture for configgen tests."""

import math


def area_of(shapes):
    total = 0.0
    for s in shapes:
        total += s.area()
    return total


def memoize(fn):
    cache = {}

    def inner(x):
        if x not in cache:
            cache[x] = fn(x)
        return cache[x]

    return inner


@memoize
def factorial(n):
    if n < 2:
        return 1
    return n * factorial(n - 1)


class Circle:
    def __init__(self, r):
        self.r = r

    def area(self):
        return math.pi * self.r ** 2

    def scale(self, k):
        if k <= 0:
            raise ValueError("k must be positive")
        self.r *= k
        return self
