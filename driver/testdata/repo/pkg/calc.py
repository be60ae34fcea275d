"""Helpers the end-to-end test asks about."""


def mean(values):
    total = 0
    for v in values:
        total += v
    return total / len(values)


def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x
