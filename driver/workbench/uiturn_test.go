package workbench

import (
	"context"
	"testing"
	"time"
)

func TestNewUITurnsOnlyForSharedRenderers(t *testing.T) {
	for _, c := range []struct{ windows, processes, turns int }{
		{1, 1, 0}, {4, 0, 0}, {4, 4, 0}, {2, 1, 1}, {4, 1, 1}, {8, 2, 2},
	} {
		got := NewUITurns(c.windows, c.processes)
		n := 0
		if got != nil {
			n = cap(got.held)
		}
		if n != c.turns {
			t.Errorf("%d windows on %d processes: %d turns at once, want %d", c.windows, c.processes, n, c.turns)
		}
	}
}

func TestUITurnsOneWindowAtATime(t *testing.T) {
	ctx := context.Background()
	turns := &UITurns{held: make(chan struct{}, 1), wait: 20 * time.Millisecond}

	end := turns.take(ctx)
	if len(turns.held) != 1 {
		t.Fatalf("after a take: %d turns held, want 1", len(turns.held))
	}
	// A second window waits the bound out and goes on without a turn; its
	// end must not end the first window's turn.
	start := time.Now()
	endOther := turns.take(ctx)
	if waited := time.Since(start); waited < turns.wait {
		t.Errorf("the second window went on after %v, before the first ended its turn or %v passed", waited, turns.wait)
	}
	endOther()
	if len(turns.held) != 1 {
		t.Fatalf("the turnless window's end released the first window's turn (%d held)", len(turns.held))
	}
	end()
	end() // ending twice releases once
	if len(turns.held) != 0 {
		t.Fatalf("after the end: %d turns held, want 0", len(turns.held))
	}

	// A waiting window gets the turn when the holder ends it.
	end = turns.take(ctx)
	turns.wait = time.Minute
	got := make(chan func())
	go func() { got <- turns.take(ctx) }()
	end()
	select {
	case endNext := <-got:
		if len(turns.held) != 1 {
			t.Fatalf("the waiting window holds no turn (%d held)", len(turns.held))
		}
		endNext()
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting window did not get the turn the holder ended")
	}

	// A cancelled context stops the wait.
	end = turns.take(ctx)
	defer end()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	turns.take(cctx)()
	if len(turns.held) != 1 {
		t.Fatalf("after a cancelled wait: %d turns held, want 1", len(turns.held))
	}
}

func TestNilUITurnsNeverWait(t *testing.T) {
	var turns *UITurns
	turns.take(context.Background())() // no panic, no wait
}
