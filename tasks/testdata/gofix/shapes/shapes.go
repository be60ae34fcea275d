// Package shapes is a fixture: a method called through an interface.
package shapes

import "fmt"

// Shape has an area.
type Shape interface{ Area() int }

// Square is a Shape with a value receiver.
type Square struct{ S int }

// Area of a square.
func (s Square) Area() int { return s.S * s.S }

// Rect is a Shape with a pointer receiver.
type Rect struct{ W, H int }

// Area of a rectangle.
func (r *Rect) Area() int { return mul(r.W, r.H) }

func mul(a, b int) int { return a * b }

// Total sums the areas of shapes.
func Total(shapes []Shape) int {
	t := 0
	for _, s := range shapes {
		t += s.Area()
	}
	return t
}

// Describe says a shape's area.
func Describe(s Shape) string {
	return fmt.Sprintf("area %d", s.Area())
}
