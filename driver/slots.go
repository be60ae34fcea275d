package driver

import (
	"context"
	"fmt"

	"dialogfarm/dialog"
)

// OpenSessions opens simulator windows until n are open; they are kept for
// later calls, as Drive keeps them.
func (r *Runner) OpenSessions(ctx context.Context, n int) error {
	for len(r.sessions) < n {
		sess, err := r.NewSession(ctx, fmt.Sprintf("s%d", len(r.sessions)+1))
		if err != nil {
			return err
		}
		r.sessions = append(r.sessions, sess)
	}
	return nil
}

// DriveSlot drives one config on the slot-th window opened by
// OpenSessions, for a caller that schedules configs itself (the farm's
// workers). It returns an error only when ctx ended while the config was in
// flight; retry says a failed dialogue may pass on another attempt.
func (r *Runner) DriveSlot(ctx context.Context, slot int, c dialog.ChatConfig) (d dialog.Dialogue, retry bool, err error) {
	if slot < 0 || slot >= len(r.sessions) {
		return d, false, fmt.Errorf("simulator slot %d: only %d windows are open", slot, len(r.sessions))
	}
	d, ok, retry := r.driveOne(ctx, r.sessions[slot], c)
	if !ok {
		return d, false, fmt.Errorf("config %s not finished: %w", c.ID, context.Cause(ctx))
	}
	return d, retry, nil
}
