package browser

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.uber.org/zap/zaptest"
)

// fakePage is a window of windowsBrowser: its number, and whether opening
// a window beside it fails (its renderer died).
type fakePage struct {
	Page
	n    int
	dead bool
}

func (p *fakePage) Close() error { return nil }

// windowsBrowser records how each window opened: on its own (-1) or
// beside which window.
type windowsBrowser struct {
	closingBrowser
	opened []*fakePage
	beside []int
}

func (b *windowsBrowser) NewWindow(_ context.Context, beside Page) (Page, error) {
	from := -1
	if beside != nil {
		from = beside.(*fakePage).n
		if beside.(*fakePage).dead {
			return nil, errors.New("target closed")
		}
	}
	p := &fakePage{n: len(b.opened)}
	b.opened, b.beside = append(b.opened, p), append(b.beside, from)
	return p, nil
}

// TestWindowGroups: windows go to the process with the fewest, the first
// of a process on its own and the others beside one of its windows; a
// closed window leaves its process, and a window that cannot have one
// opened beside it is left out, the next one tried, and with none left the
// window opens on its own.
func TestWindowGroups(t *testing.T) {
	ctx := context.Background()
	b := &windowsBrowser{}
	g := newWindowGroups(2, zaptest.NewLogger(t))
	var wins []Page
	for range 5 {
		w, err := g.open(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		wins = append(wins, w)
	}
	// 0 and 1 start the two processes; 2 and 4 join 0's, 3 joins 1's.
	if want := []int{-1, -1, 0, 1, 0}; !slices.Equal(b.beside, want) {
		t.Fatalf("windows opened beside %v, want %v", b.beside, want)
	}
	if got := []int{Renderer(wins[0]), Renderer(wins[1]), Renderer(wins[4])}; !slices.Equal(got, []int{0, 1, 0}) {
		t.Errorf("renderers of windows 0, 1, 4: %v, want [0 1 0]", got)
	}
	// Closing both of process 1's windows leaves it empty: the next
	// window starts it again, on its own.
	for _, i := range []int{1, 3} {
		if err := wins[i].Close(); err != nil {
			t.Fatal(err)
		}
	}
	w, err := g.open(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.beside[len(b.beside)-1]; got != -1 || Renderer(w) != 1 {
		t.Errorf("process 1 had no window left, yet the next window opened beside %d in process %d", got, Renderer(w))
	}
	// That window's renderer died: the next window (process 1 has the
	// fewest) cannot open beside it, leaves it out and opens on its own.
	b.opened[len(b.opened)-1].dead = true
	if w, err = g.open(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := b.beside[len(b.beside)-1]; got != -1 || Renderer(w) != 1 {
		t.Errorf("beside a dead window: opened beside %d in process %d, want on its own in process 1", got, Renderer(w))
	}
	if sizes := groupSizes(g); !slices.Equal(sizes, []int{3, 1}) {
		t.Errorf("windows per process %v, want [3 1]", sizes)
	}
	if Renderer(&fakePage{}) != -1 {
		t.Error("a page NewWindow did not open has a renderer index")
	}
}

// TestNewLoneWindow: a lone window opens on its own, joins no process's
// group, and leaves the groups as they were.
func TestNewLoneWindow(t *testing.T) {
	ctx := context.Background()
	b := &windowsBrowser{}
	c := &Chromium{b: b, windows: newWindowGroups(1, zaptest.NewLogger(t))}
	first, err := c.NewWindow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lone, err := c.NewLoneWindow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next, err := c.NewWindow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{-1, -1, 0}; !slices.Equal(b.beside, want) {
		t.Errorf("windows opened beside %v, want %v", b.beside, want)
	}
	if got := []int{Renderer(first), Renderer(lone), Renderer(next)}; !slices.Equal(got, []int{0, -1, 0}) {
		t.Errorf("renderers of the first, the lone and the next window: %v, want [0 -1 0]", got)
	}
}
