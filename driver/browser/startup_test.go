package browser

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// closingBrowser is a browser whose start-up never ends; once closed, a
// StartupDone call in flight fails only when the test lets it (release).
type closingBrowser struct {
	closed, release chan struct{}
	closeOnce       sync.Once
	mu              sync.Mutex
	events          []string
}

func (b *closingBrowser) event(e string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, e)
}

func (b *closingBrowser) StartupDone(ctx context.Context) (bool, error) {
	select {
	case <-b.closed:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	<-b.release
	b.event("watch saw the browser closed")
	return false, errors.New("the browser is closed")
}

func (b *closingBrowser) OpenApart(context.Context, string) (func(), error) { return func() {}, nil }
func (b *closingBrowser) NewWindow(context.Context, Page) (Page, error) {
	return nil, errors.New("no windows")
}
func (b *closingBrowser) PID() int        { return 0 }
func (b *closingBrowser) Version() string { return "fake" }
func (b *closingBrowser) Close()          { b.closeOnce.Do(func() { close(b.closed) }) }

// TestCloseWaitsForTheStartupWatch closes a browser whose start-up has not
// ended: Close returns only once endStartup's watch has stopped, so that
// nothing of the browser's logs after it (a test's logger fails then).
func TestCloseWaitsForTheStartupWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fake := &closingBrowser{closed: make(chan struct{}), release: make(chan struct{})}
	s, err := endStartup(ctx, fake, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	c := &Chromium{b: fake, startup: s}
	returned := make(chan struct{})
	go func() {
		c.Close()
		fake.event("Close returned")
		close(returned)
	}()
	<-fake.closed
	close(fake.release)
	<-returned
	if err := s.wait(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"watch saw the browser closed", "Close returned"}
	if len(fake.events) != 2 || fake.events[0] != want[0] || fake.events[1] != want[1] {
		t.Errorf("events %q, want %q", fake.events, want)
	}
}
