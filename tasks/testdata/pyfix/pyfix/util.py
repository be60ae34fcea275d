"""Utilities: a decorator, a generator, a closure, a thread, import-time work."""
import functools
import threading


def normalize(s):
    return s.lower()


def build_registry():
    return {normalize("A"): 1}


REGISTRY = build_registry()


def lookup(k):
    return REGISTRY.get(normalize(k))


def histogram(words):
    """Count each word, ignoring case and surrounding blanks."""
    counts = {}
    for w in words:
        key = w.strip().lower()
        if key:
            counts[key] = counts.get(key, 0) + 1
    return counts


def logged(f):
    @functools.wraps(f)
    def wrapper(*a, **kw):
        return f(*a, **kw)

    return wrapper


@logged
def scale(x, k):
    """Multiply x by k."""
    return x * k


def countdown(n):
    while n > 0:
        yield n
        n -= 1


def total_countdown(n):
    return sum(countdown(n))


def helper(x):
    return x + 1


def make_adder(k):
    def add(x):
        return helper(x) + k

    return add


def square(x):
    return x * x


class Worker(threading.Thread):
    def __init__(self, x):
        super().__init__()
        self.x = x
        self.result = None

    def run(self):
        self.result = square(self.x)


def run_worker(x):
    w = Worker(x)
    w.start()
    w.join()
    return w.result
