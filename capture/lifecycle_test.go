package capture

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

func TestSinkFailureSurfacesInNext(t *testing.T) {
	boom := errors.New("disk full")
	s, _ := startServer(t, fixed("x"), &memSink{err: boom})
	post(t, s.BaseURL("sink")+"/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, nil)
	ex, err := s.Next(t.Context(), "sink")
	if !errors.Is(err, boom) || ex.Answer != "x" {
		t.Errorf("Next = %+v, %v; want the exchange and the sink's error", ex, err)
	}
}

func TestShutdownReleasesNext(t *testing.T) {
	log, _ := testLogger(t)
	s, err := Listen(t.Context(), DefaultConfig(), fixed("x"), nil, log)
	if err != nil {
		t.Fatal(err)
	}
	post(t, s.BaseURL("sd")+"/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, nil)
	waiting := make(chan error, 1)
	go func() {
		_, err := s.Next(context.Background(), "other")
		waiting <- err
	}()
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; !errors.Is(err, ErrClosed) {
		t.Errorf("waiting Next = %v, want ErrClosed", err)
	}
	if ex, err := s.Next(t.Context(), "sd"); err != nil || ex.Answer != "x" {
		t.Errorf("Next after Shutdown = %+v, %v: the pending exchange should still come out", ex, err)
	}
	if _, err := s.Next(t.Context(), "sd"); !errors.Is(err, ErrClosed) {
		t.Errorf("Next on an empty closed session = %v", err)
	}
	if _, err := http.Get(s.URL() + "/v1/models"); err == nil {
		t.Error("server still answers after Shutdown")
	}
}

// TestShutdownWithAnUnusedConnection: a connection that never sent a
// request does not hold Shutdown up (http.Server counts it as busy until
// it is 5 s old).
func TestShutdownWithAnUnusedConnection(t *testing.T) {
	log, _ := testLogger(t)
	s, err := Listen(t.Context(), DefaultConfig(), fixed("x"), nil, log)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	post(t, s.BaseURL("u")+"/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, nil) // accepted after conn
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown with an unused connection open = %v", err)
	}
}

func TestShutdownCancelsSlowResponders(t *testing.T) {
	started := make(chan struct{})
	r := ResponderFunc(func(ctx context.Context, _ Request) (Answer, error) {
		close(started)
		<-ctx.Done()
		return Answer{}, ctx.Err()
	})
	log, _ := testLogger(t)
	s, err := Listen(t.Context(), DefaultConfig(), r, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	var g errgroup.Group
	g.Go(func() error {
		resp, err := http.Post(s.BaseURL("slow")+"/chat/completions", "application/json",
			strings.NewReader(`{"messages":[{"role":"user","content":"x"}]}`))
		if err == nil {
			resp.Body.Close()
		}
		return nil
	})
	<-started
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want deadline exceeded", err)
	}
	ex := nextNow(t, s, "slow")
	if !strings.Contains(ex.Error, "context canceled") {
		t.Errorf("exchange error = %q", ex.Error)
	}
	_ = g.Wait()
}

func TestForget(t *testing.T) {
	s, _ := startServer(t, fixed("x"), nil)
	body := `{"messages":[{"role":"user","content":"x"}]}`
	post(t, s.BaseURL("f")+"/chat/completions", body, nil)
	post(t, s.BaseURL("f")+"/chat/completions", body, nil)
	if n := len(s.Exchanges("f")); n != 2 {
		t.Fatalf("%d exchanges", n)
	}
	s.Forget("f")
	if n := len(s.Exchanges("f")); n != 0 {
		t.Errorf("%d exchanges after Forget", n)
	}
	post(t, s.BaseURL("f")+"/chat/completions", body, nil)
	if ex := nextNow(t, s, "f"); ex.Seq != 3 {
		t.Errorf("seq after Forget = %d, want 3 (numbering goes on)", ex.Seq)
	}
	if n := len(s.Exchanges("f")); n != 1 {
		t.Errorf("%d exchanges held, want only the one after Forget", n)
	}
}

func TestBodyTooLarge(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxBodyBytes = 16
	log, _ := testLogger(t)
	h := NewHandler(cfg, fixed("x"), nil, log)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/"+h.Secret()+"/s/big/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"far too long"}]}`)))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("status = %d", rec.Code)
	}
	ex, err := h.Next(t.Context(), "big")
	if err != nil || !strings.Contains(ex.Error, "read request body") {
		t.Errorf("exchange = %+v, %v", ex, err)
	}
}
