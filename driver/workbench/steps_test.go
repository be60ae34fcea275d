package workbench

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"dialogfarm/dialog"
)

var errBoom = errors.New("boom")

func TestStepsRun(t *testing.T) {
	ok := func(context.Context) error { return nil }
	fail := func(context.Context) error { return errBoom }
	cases := []struct {
		name     string
		steps    []string // names; a name starting with "fail" returns errBoom
		wantRan  []string
		wantStep string // the failing step, "" when all pass
	}{
		{"no steps", nil, nil, ""},
		{"all pass", []string{"open_file", "cursor", "trigger_panel"}, []string{"open_file", "cursor", "trigger_panel"}, ""},
		{"first fails", []string{"fail_open", "cursor", "trigger_panel"}, []string{"fail_open"}, "fail_open"},
		{"middle fails", []string{"open_file", "fail_cursor", "trigger_panel"}, []string{"open_file", "fail_cursor"}, "fail_cursor"},
		{"last fails", []string{"open_file", "cursor", "fail_trigger"}, []string{"open_file", "cursor", "fail_trigger"}, "fail_trigger"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ran []string
			var ss Steps
			for _, name := range c.steps {
				do := ok
				if len(name) > 4 && name[:4] == "fail" {
					do = fail
				}
				ss = append(ss, Step{Name: name, Do: func(ctx context.Context) error {
					ran = append(ran, name)
					return do(ctx)
				}})
			}
			before := dialog.StepTiming{Step: "earlier", Seconds: 9}
			timings := []dialog.StepTiming{before}
			err := ss.run(context.Background(), &timings)

			if !slices.Equal(ran, c.wantRan) {
				t.Errorf("ran %v, want %v", ran, c.wantRan)
			}
			if timings[0] != before {
				t.Errorf("timings[0] = %+v, the earlier timing was overwritten", timings[0])
			}
			var names []string
			for i, tm := range timings[1:] {
				names = append(names, tm.Step)
				failed := tm.Step == c.wantStep
				if failed && tm.Error != errBoom.Error() {
					t.Errorf("timing %d (%s) error = %q, want %q", i, tm.Step, tm.Error, errBoom)
				}
				if !failed && tm.Error != "" {
					t.Errorf("timing %d (%s) error = %q for a step that passed", i, tm.Step, tm.Error)
				}
				if tm.Seconds < 0 {
					t.Errorf("timing %d (%s) seconds = %v", i, tm.Step, tm.Seconds)
				}
			}
			if !slices.Equal(names, c.wantRan) {
				t.Errorf("timings for %v, want %v", names, c.wantRan)
			}

			if c.wantStep == "" {
				if err != nil {
					t.Errorf("run() = %v, want nil", err)
				}
				return
			}
			var se *StepError
			if !errors.As(err, &se) {
				t.Fatalf("run() = %#v, want a *StepError", err)
			}
			if se.Step != c.wantStep {
				t.Errorf("StepError.Step = %q, want %q", se.Step, c.wantStep)
			}
			if !errors.Is(err, errBoom) {
				t.Errorf("run() = %v does not wrap the step's error", err)
			}
			if want := "step " + c.wantStep + ": boom"; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err, want)
			}
		})
	}
}

func TestStepsRunMeasuresSeconds(t *testing.T) {
	const wait = 30 * time.Millisecond
	var timings []dialog.StepTiming
	err := Steps{{Name: "wait", Do: func(ctx context.Context) error {
		select {
		case <-time.After(wait):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}}.run(context.Background(), &timings)
	if err != nil {
		t.Fatal(err)
	}
	if len(timings) != 1 || timings[0].Seconds < wait.Seconds() || timings[0].Seconds > 10 {
		t.Errorf("timings = %+v, want one timing of at least %v seconds", timings, wait.Seconds())
	}
}

func TestStepsRunTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	var (
		deadlines []bool
		ctxs      []context.Context
	)
	record := func(ctx context.Context) {
		_, ok := ctx.Deadline()
		deadlines = append(deadlines, ok)
		ctxs = append(ctxs, ctx)
	}
	var timings []dialog.StepTiming
	start := time.Now()
	err := Steps{
		{Name: "quick", Timeout: time.Minute, Do: func(ctx context.Context) error {
			dl, _ := ctx.Deadline()
			if d := time.Until(dl); d <= 0 || d > time.Minute {
				t.Errorf("quick step deadline in %v, want within a minute", d)
			}
			record(ctx)
			return nil
		}},
		{Name: "no_timeout", Do: func(ctx context.Context) error { record(ctx); return nil }},
		{Name: "hangs", Timeout: timeout, Do: func(ctx context.Context) error {
			record(ctx)
			<-ctx.Done() // never returns without the step's deadline
			return ctx.Err()
		}},
		{Name: "after", Do: func(ctx context.Context) error { record(ctx); return nil }},
	}.run(context.Background(), &timings)

	if elapsed := time.Since(start); elapsed < timeout {
		t.Errorf("run returned after %v, before the %v timeout", elapsed, timeout)
	}
	var se *StepError
	if !errors.As(err, &se) || se.Step != "hangs" || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run() = %v, want a StepError for hangs wrapping context.DeadlineExceeded", err)
	}
	if want := []bool{true, false, true}; !slices.Equal(deadlines, want) {
		t.Errorf("steps had deadlines %v, want %v (a step without Timeout must not inherit the previous one's)", deadlines, want)
	}
	if ctxs[0].Err() == nil {
		t.Error("the quick step's context was not cancelled after it returned")
	}
	if ctxs[1].Err() != nil {
		t.Errorf("the step without Timeout got a cancelled context: %v", ctxs[1].Err())
	}
	if len(timings) != 3 || timings[2].Error != context.DeadlineExceeded.Error() {
		t.Errorf("timings = %+v, want 3 with the last one failed by the deadline", timings)
	}
}

func TestStepsRunParentContext(t *testing.T) {
	cases := []struct {
		name      string
		timeout   time.Duration
		wantEarly bool // the step's deadline is the parent's, not its own
	}{
		{"no step timeout keeps the parent deadline", 0, true},
		{"a longer step timeout keeps the parent deadline", time.Hour, true},
		{"a shorter step timeout wins", time.Second, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			parent, _ := ctx.Deadline()
			var got time.Time
			var timings []dialog.StepTiming
			err := Steps{{Name: "s", Timeout: c.timeout, Do: func(ctx context.Context) error {
				got, _ = ctx.Deadline()
				return nil
			}}}.run(ctx, &timings)
			if err != nil {
				t.Fatal(err)
			}
			if early := got.Equal(parent); early != c.wantEarly {
				t.Errorf("step deadline %v, parent deadline %v, want the parent's: %v", got, parent, c.wantEarly)
			}
		})
	}
}
