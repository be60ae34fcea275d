package workbench

import (
	"context"
	"sync"
	"time"
)

// UITurnWait bounds how long a window waits for its turn at the shared
// renderer (UITurns) before it starts its steps anyway: a window whose
// steps stall (a step waiting out its timeout) then delays the others by
// this much at most, not by the stall.
const UITurnWait = 1500 * time.Millisecond

// UITurns lets the windows that share a renderer process take turns at
// their steps up to the first query (reset, open the file, select,
// trigger, type): the steps of all of a process's windows run on its one
// main thread. Left alone, windows whose steps overlap all slow down,
// finish together, wait for the model together and start again together:
// a convoy, the main thread saturated while they step and idle while they
// all wait. Taking turns keeps them out of step, one window stepping while
// the others wait for the model. A nil *UITurns (a renderer process per
// window) never waits.
type UITurns struct {
	held []chan struct{} // per renderer process, its turn while a window takes it
	wait time.Duration   // the longest a window waits for a turn
}

// NewUITurns returns turns for the given number of windows on the given
// number of renderer processes (0: a process per window): one window per
// process steps at a time. Windows with a process each need no turns.
func NewUITurns(windows, processes int) *UITurns {
	if processes <= 0 || windows <= processes {
		return nil
	}
	t := &UITurns{held: make([]chan struct{}, processes), wait: UITurnWait}
	for i := range t.held {
		t.held[i] = make(chan struct{}, 1)
	}
	return t
}

// take waits for the turn at the given renderer process (its index, as
// browser.Renderer gives it; -1: a process of the window's own), until
// t.wait has passed or ctx ends, and returns the function that ends it
// (once, however often it is called). A window that waited t.wait goes
// on without a turn; its function does nothing.
func (t *UITurns) take(ctx context.Context, process int) func() {
	if t == nil || process < 0 {
		return func() {}
	}
	held := t.held[process%len(t.held)]
	timer := time.NewTimer(t.wait)
	defer timer.Stop()
	select {
	case held <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-held }) }
	case <-timer.C:
	case <-ctx.Done():
	}
	return func() {}
}
