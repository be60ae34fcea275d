package browser

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
)

// windowGroups spreads a browser's windows over Config.RendererProcesses
// renderer processes, evenly and by construction: a group's first window
// opens on its own (a renderer process of its own) and the group's other
// windows open beside one of its live windows (browser.NewWindow), so
// they run in that window's process.
//
// Chromium's own cap (--renderer-process-limit) did not do this: once the
// cap is reached it puts a new window in a process picked among the
// existing ones, and it counts every renderer, the page that ends its
// start-up (endStartup) among them. With a cap of 2, the 16 windows of
// editorbench -standing all landed in one process when they opened
// before the start-up ended, in a session's run (28.6 dialogues/min, median
// dialogue 27.7 s) where another run of the same level had 36.9/min.
type windowGroups struct {
	log    *zap.Logger
	mu     sync.Mutex
	groups [][]*groupWindow // the live windows of each process
}

// groupWindow is a window that leaves its group when it closes.
type groupWindow struct {
	Page
	groups *windowGroups
	group  int // its index in groups
}

// Renderer is the renderer process a window NewWindow opened runs in,
// as its index among Config.RendererProcesses; -1 for a window with a
// process of its own (RendererProcesses 0) or a page NewWindow did not
// open.
func Renderer(p Page) int {
	if w, ok := p.(*groupWindow); ok {
		return w.group
	}
	return -1
}

// Close closes the window and takes it out of its group.
func (w *groupWindow) Close() error {
	w.groups.leave(w)
	return w.Page.Close()
}

// besideWait bounds the opening of a window beside another: a window
// that does not answer by then (its renderer crashed or hangs) is left
// out of its group, and the window opens beside another or on its own.
const besideWait = 10 * time.Second

// newWindowGroups returns groups for the given number of renderer
// processes; nil (a process per window) for 0.
func newWindowGroups(processes int, log *zap.Logger) *windowGroups {
	if processes <= 0 {
		return nil
	}
	return &windowGroups{log: log, groups: make([][]*groupWindow, processes)}
}

// open opens a window in the group with the fewest live windows (the
// first of those): beside one of them, or on its own when it has none.
func (g *windowGroups) open(ctx context.Context, b browser) (Page, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := 0
	for j, ws := range g.groups {
		if len(ws) < len(g.groups[i]) {
			i = j
		}
	}
	for len(g.groups[i]) > 0 {
		beside := g.groups[i][0]
		octx, cancel := context.WithTimeout(ctx, besideWait)
		p, err := b.NewWindow(octx, beside.Page)
		cancel()
		if err == nil {
			return g.add(i, p), nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		g.log.Warn("cannot open a window beside a window of its renderer process; leaving that window out of the process's group",
			zap.Int("process", i), zap.Error(err))
		g.groups[i] = g.groups[i][1:]
	}
	p, err := b.NewWindow(ctx, nil)
	if err != nil {
		return nil, err
	}
	return g.add(i, p), nil
}

// add puts p in group i. The caller holds g.mu.
func (g *windowGroups) add(i int, p Page) Page {
	w := &groupWindow{Page: p, groups: g, group: i}
	g.groups[i] = append(g.groups[i], w)
	return w
}

// leave takes w out of its group, if it is still in one.
func (g *windowGroups) leave(w *groupWindow) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, ws := range g.groups {
		g.groups[i] = slices.DeleteFunc(ws, func(x *groupWindow) bool { return x == w })
	}
}
