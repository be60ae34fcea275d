package workbench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"dialogfarm/dialog"
)

// Step is one thing the simulated developer does. Do acts through the UI and
// returns only once the state the step promises is visible (or fails).
type Step struct {
	Name    string
	Timeout time.Duration
	Do      func(ctx context.Context) error
}

// Steps run in order; the first failure stops them.
type Steps []Step

// StepError names the step that failed.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return fmt.Sprintf("step %s: %v", e.Step, e.Err) }
func (e *StepError) Unwrap() error { return e.Err }

// ErrConfig marks a config the driver cannot execute (a file that does not
// exist, a position outside it); retrying it is pointless.
var ErrConfig = errors.New("config does not fit the repository")

// run executes the steps, appending a timing per step to timings.
func (ss Steps) run(ctx context.Context, timings *[]dialog.StepTiming) error {
	for _, st := range ss {
		start := time.Now()
		sctx, cancel := ctx, context.CancelFunc(func() {})
		if st.Timeout > 0 {
			sctx, cancel = context.WithTimeout(ctx, st.Timeout)
		}
		err := st.Do(sctx)
		cancel()
		t := dialog.StepTiming{Step: st.Name, Seconds: time.Since(start).Seconds()}
		if err != nil {
			t.Error = err.Error()
		}
		*timings = append(*timings, t)
		if err != nil {
			return &StepError{Step: st.Name, Err: err}
		}
	}
	return nil
}
