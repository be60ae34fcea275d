package workbench

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"dialogfarm/driver/browser"
)

// code-server runs with password authentication: a page without its
// session cookie is redirected to /login. The browser profile keeps the
// cookie, so only the first window of a browser (and the first after the
// cookie stops being accepted) sees the login page.

// jsLoginOrWorkbench returns "login" when code-server's login form is
// shown, "workbench" once the workbench has started, else null.
const jsLoginOrWorkbench = `() => {
	if (document.querySelector('.monaco-workbench')) return 'workbench';
	if (document.querySelector('form.login-form input[name="password"]')) return 'login';
	return null;
}`

// jsLoginError returns the login page's error text, or an empty string.
const jsLoginError = `() => {
	const e = document.querySelector('form.login-form .error');
	return e ? e.textContent.trim() : '';
}`

// login waits for the page to show either the workbench or the login form
// and, on the login form, types the password as a person would (click the
// field, type, Enter), logging how long that took from the form showing to
// the workbench starting. It returns once the workbench has started.
func (w *window) login(ctx context.Context, password string, log *zap.Logger) error {
	state, err := w.value(ctx, "the login page or the workbench shows", jsLoginOrWorkbench)
	if err != nil || state == "workbench" {
		return err
	}
	if password == "" {
		return fmt.Errorf("code-server asks for a password, and none is known")
	}
	shown := time.Now()
	if err := w.typePassword(ctx, password); err != nil {
		return err
	}
	log.Info("logged in to code-server", zap.Float64("seconds", time.Since(shown).Seconds()))
	return nil
}

// typePassword fills in and submits the login form, and waits for the
// workbench.
func (w *window) typePassword(ctx context.Context, password string) error {
	// The form moves once the page's style sheet applies: take its place
	// only when the page has loaded, and click again if the first click
	// found the field elsewhere.
	for attempt := 1; ; attempt++ {
		p, err := w.point(ctx, "the password field is visible", `() => {
			const el = document.querySelector('form.login-form input[name="password"]');
			if (!el || document.readyState !== 'complete') return null;
			const r = el.getBoundingClientRect();
			return r.width > 0 ? {x: r.left + r.width / 2, y: r.top + r.height / 2} : null;
		}`)
		if err != nil {
			return err
		}
		if err := w.click(ctx, p, browser.MouseLeft); err != nil {
			return err
		}
		quick, cancel := context.WithTimeout(ctx, 3*time.Second)
		err = w.waitFor(quick, "the password field has focus", `() => {
			const el = document.activeElement;
			return !!el && el.name === 'password';
		}`)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil || attempt == 3 {
			at, aerr := w.eval(ctx, `(x, y) => {
				const e = document.elementFromPoint(x, y), a = document.activeElement;
				return (e ? e.tagName + '.' + e.className : 'nothing') + ' under the pointer, ' +
					(a ? a.tagName + '.' + a.className : 'nothing') + ' focused';
			}`, p.X, p.Y)
			if aerr == nil {
				return fmt.Errorf("%w (%s)", err, at.Str())
			}
			return err
		}
	}
	if err := w.page.InsertText(ctx, password); err != nil {
		// The error must not carry the password.
		return fmt.Errorf("type the password: %w", err)
	}
	if err := w.waitFor(ctx, "the password field is filled", `(n) => {
		const el = document.querySelector('form.login-form input[name="password"]');
		return !!el && el.value.length === n;
	}`, len(password)); err != nil {
		return err
	}
	if err := w.keys(ctx, keyEnter); err != nil {
		return err
	}
	state, err := w.value(ctx, "the workbench shows after logging in", `() => {
		if (document.querySelector('.monaco-workbench')) return 'workbench';
		const e = (`+jsLoginError+`)();
		return e ? 'error: ' + e : null;
	}`)
	if err != nil {
		return err
	}
	if state != "workbench" {
		return fmt.Errorf("log in to code-server: the login page says %q", state)
	}
	return nil
}
