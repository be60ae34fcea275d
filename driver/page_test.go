package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"dialogfarm/driver/browser"
)

// pollPage evaluates the JS function expression js in the page until it
// returns something truthy, and returns that, or the last error once ctx
// ends. Driver tests read a window through it; the workbench's own waits
// are package workbench's.
func pollPage(ctx context.Context, p browser.Page, what, js string, args ...any) (json.RawMessage, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		v, err := p.Eval(ctx, js, args...)
		if err == nil {
			var x any
			if err = json.Unmarshal(v, &x); err == nil && truthy(x) {
				return v, nil
			}
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait until %s: %w (last error: %v)", what, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// truthy is JavaScript's truthiness of a JSON value.
func truthy(x any) bool {
	switch v := x.(type) {
	case nil:
		return false
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		return v != ""
	}
	return true
}

// clip shortens s to n runes for a test message.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// waitWorkbenchNoLogin waits for the page to show code-server's workbench
// or its login form, and fails on the login form: a window of a browser
// that has logged in before needs none.
func waitWorkbenchNoLogin(ctx context.Context, p browser.Page) error {
	v, err := pollPage(ctx, p, "the login page or the workbench shows", `() => {
		if (document.querySelector('.monaco-workbench')) return 'workbench';
		if (document.querySelector('form.login-form input[name="password"]')) return 'login';
		return null;
	}`)
	if err != nil {
		return err
	}
	if string(v) != `"workbench"` {
		return fmt.Errorf("code-server shows its login page (%s), where the login cookie should have let the window in", v)
	}
	return nil
}
