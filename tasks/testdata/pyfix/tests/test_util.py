import os

import pytest

from pyfix import util


def test_lookup():
    assert util.lookup("A") == 1


def test_lookup_rejects_none():
    # vacuous: any exception passes, the stub's NotImplementedError too;
    # its step has a real test as well, so the step is exported
    with pytest.raises(Exception):
        util.lookup(None)


def test_histogram():
    assert util.histogram(["a", " A", "b", ""]) == {"a": 2, "b": 1}


def test_scale():
    assert util.scale(2, 3) == 6


def test_countdown():
    assert util.total_countdown(3) == 6


def test_adder():
    assert util.make_adder(1)(2) == 4


def test_worker():
    assert util.run_worker(3) == 9


def test_mixed():
    # nothing new: its group is merged into a step it depends on
    assert util.run_worker(util.total_countdown(2)) == 9


def test_flaky():
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "pyfix-flaky-counter")
    n = int(open(path).read()) if os.path.exists(path) else 0
    with open(path, "w") as f:
        f.write(str(n + 1))
    assert n % 2 == 0
