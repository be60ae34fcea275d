import pytest

from pyfix.shapes import Rect, Square, total


def test_total():
    assert total([Square(2), Rect(2, 3)]) == 10


def test_total_rejects_none():
    # vacuous: any exception passes, the stub's NotImplementedError too
    with pytest.raises(Exception):
        total([None])
