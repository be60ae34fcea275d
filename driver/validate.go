package driver

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"dialogfarm/driver/workbench"
)

// ValidateLive starts the editor with the adapter's plugin (rc.Adapters[0])
// and checks that every selector, title and condition of the adapter
// resolves: the plugin's readiness sign, its activity-bar item, each command
// title in the palette and each context-menu label, the open keybinding,
// the webview frames and readiness, the setup steps, the input and send
// control, and a test message through the capture endpoint: sent, answered,
// done by the adapter's condition, shown as sent; then new chat. Each check
// is reported by field; a check that cannot run because an earlier one
// failed is reported as skipped.
func ValidateLive(ctx context.Context, rc RunConfig, capture workbench.Exchanges, log *zap.Logger) ([]workbench.Check, error) {
	if len(rc.Adapters) != 1 {
		return nil, errors.New("validate: give exactly one adapter")
	}
	a := rc.Adapters[0]
	r := NewRunner(rc, capture, nil, log)
	if err := r.Start(ctx); err != nil {
		return nil, err
	}
	defer r.Stop()
	ws, err := workbench.ProbeWorkspace(r.cfg.Out)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	s, err := r.NewSession(ctx, "validate")
	if err != nil {
		return nil, err
	}
	return s.Validate(ctx, a, ws), nil
}
