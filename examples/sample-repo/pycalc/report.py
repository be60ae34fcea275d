"""Monthly billing report built from invoices."""

import functools
from collections import defaultdict


def cached(fn):
    memo = {}

    @functools.wraps(fn)
    def wrapper(*args):
        if args not in memo:
            memo[args] = fn(*args)
        return memo[args]

    return wrapper


@cached
def fiscal_quarter(month):
    if month < 1 or month > 12:
        raise ValueError("month out of range")
    return (month - 1) // 3 + 1


class Report:
    def __init__(self, invoices):
        self.invoices = list(invoices)

    def totals_by_customer(self):
        totals = defaultdict(float)
        for inv in self.invoices:
            totals[inv.customer] += inv.total()
        return dict(totals)

    def top_customers(self, n=3):
        totals = self.totals_by_customer()
        ranked = sorted(totals.items(), key=lambda kv: kv[1], reverse=True)
        return [name for name, _ in ranked[:n]]
