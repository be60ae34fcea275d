"""Shapes: a method called through a base class."""


class Shape:
    def area(self):
        raise NotImplementedError


class Square(Shape):
    def __init__(self, s):
        self.s = s

    def area(self):
        # a comment that must survive stubbing
        return self.s * self.s


class Rect(Shape):
    def __init__(self, w, h):
        self.w, self.h = w, h

    def area(self):
        return self.w * self.h


def total(shapes):
    """Sum of the areas."""
    return sum(s.area() for s in shapes)