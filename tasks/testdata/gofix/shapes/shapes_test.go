package shapes_test

import (
	"testing"

	"gofix/shapes"
)

func TestTotal(t *testing.T) {
	if got := shapes.Total([]shapes.Shape{shapes.Square{S: 2}, &shapes.Rect{W: 2, H: 3}}); got != 10 {
		t.Fatalf("Total = %d, want 10", got)
	}
}

func TestDescribe(t *testing.T) {
	if got := shapes.Describe(shapes.Square{S: 3}); got != "area 9" {
		t.Fatalf("Describe = %q", got)
	}
}
