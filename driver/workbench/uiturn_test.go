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
			n = len(got.held)
		}
		if n != c.turns {
			t.Errorf("%d windows on %d processes: %d turns at once, want %d", c.windows, c.processes, n, c.turns)
		}
	}
}

func TestUITurnsOneWindowAtATime(t *testing.T) {
	ctx := context.Background()
	turns := NewUITurns(4, 2)
	turns.wait = 20 * time.Millisecond
	held := turns.held[1]

	end := turns.take(ctx, 1)
	if len(held) != 1 {
		t.Fatalf("after a take: %d turns held, want 1", len(held))
	}
	// A second window waits the bound out and goes on without a turn; its
	// end must not end the first window's turn.
	start := time.Now()
	endOther := turns.take(ctx, 1)
	if waited := time.Since(start); waited < turns.wait {
		t.Errorf("the second window went on after %v, before the first ended its turn or %v passed", waited, turns.wait)
	}
	endOther()
	if len(held) != 1 {
		t.Fatalf("the turnless window's end released the first window's turn (%d held)", len(held))
	}
	end()
	end() // ending twice releases once
	if len(held) != 0 {
		t.Fatalf("after the end: %d turns held, want 0", len(held))
	}

	// A waiting window gets the turn when the holder ends it.
	end = turns.take(ctx, 1)
	turns.wait = time.Minute
	got := make(chan func())
	go func() { got <- turns.take(ctx, 1) }()
	end()
	select {
	case endNext := <-got:
		if len(held) != 1 {
			t.Fatalf("the waiting window holds no turn (%d held)", len(held))
		}
		endNext()
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting window did not get the turn the holder ended")
	}

	// A cancelled context stops the wait.
	end = turns.take(ctx, 1)
	defer end()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	turns.take(cctx, 1)()
	if len(held) != 1 {
		t.Fatalf("after a cancelled wait: %d turns held, want 1", len(held))
	}
}

func TestNilUITurnsNeverWait(t *testing.T) {
	var turns *UITurns
	turns.take(context.Background(), 0)() // no panic, no wait
}

// TestUITurnsPerProcess: a window takes the turn of its own renderer
// process only, and a window with a process of its own (-1) takes none.
func TestUITurnsPerProcess(t *testing.T) {
	ctx := context.Background()
	turns := NewUITurns(4, 2)
	turns.wait = time.Minute
	end0 := turns.take(ctx, 0)
	defer end0()
	done := make(chan struct{})
	go func() {
		turns.take(ctx, 1)()
		turns.take(ctx, -1)()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a window of process 1, or of a process of its own, waited for process 0's turn")
	}
	if len(turns.held[0]) != 1 || len(turns.held[1]) != 0 {
		t.Errorf("turns held per process %d, %d; want 1, 0", len(turns.held[0]), len(turns.held[1]))
	}
}
