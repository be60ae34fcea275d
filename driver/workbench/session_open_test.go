package workbench

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
)

// navPage is a window whose Navigate reports the time its context has left
// and fails, so that open returns at once.
type navPage struct {
	browser.Page
	left chan time.Duration
}

var errNavigated = errors.New("navigated")

func (p navPage) Navigate(ctx context.Context, url string) error {
	left := time.Duration(-1)
	if dl, ok := ctx.Deadline(); ok && ctx.Err() == nil {
		left = time.Until(dl)
	}
	p.left <- left
	return errNavigated
}

type noExchanges struct{}

func (noExchanges) BaseURL(string) string      { return "http://127.0.0.1:1/s" }
func (noExchanges) Expect(string, string, int) {}
func (noExchanges) Next(context.Context, string) (dialog.Exchange, error) {
	return dialog.Exchange{}, nil
}
func (noExchanges) Forget(string) {}

// TestOpenWaitsForLoadOutsideItsTimeout: the wait for another window's load
// does not use up the window's own load timeout.
func TestOpenWaitsForLoadOutsideItsTimeout(t *testing.T) {
	// Wide margins: a loaded CI machine may take a while to schedule.
	const load = time.Second
	p := navPage{left: make(chan time.Duration, 1)}
	loads := make(chan struct{}, 1)
	loads <- struct{}{} // another window is loading
	s := &Session{ID: "s1", win: &window{page: p}, capture: noExchanges{}, dir: t.TempDir(),
		editorURL: "http://127.0.0.1:1", timeouts: Timeouts{Load: load}, loads: loads, log: zaptest.NewLogger(t)}
	// The other window's load ends after longer than this window's whole
	// load timeout.
	release := time.AfterFunc(3*load/2, func() { <-loads })
	defer release.Stop()
	err := s.open(context.Background(), t.TempDir(), nil)
	if !errors.Is(err, errNavigated) {
		t.Fatalf("open: %v, want the navigation's error", err)
	}
	if left := <-p.left; left < load/2 {
		t.Fatalf("navigation had %v of its load timeout left (-1: none or expired), want most of %v", left, load)
	}
	if len(loads) != 0 {
		t.Fatal("open kept the load slot after it returned")
	}
}
