package shutdown

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"
)

// TestCloseUnused: with a connection open that never sent a request,
// Shutdown returns before its deadline, and a ConnState hook set before
// CloseUnused still sees every connection's states.
func TestCloseUnused(t *testing.T) {
	var (
		mu     sync.Mutex
		seen   = map[http.ConnState]int{}
		closed = make(chan struct{}, 2)
	)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }),
		ConnState: func(_ net.Conn, s http.ConnState) {
			mu.Lock()
			seen[s]++
			mu.Unlock()
			if s == http.StateClosed {
				closed <- struct{}{}
			}
		},
	}
	CloseUnused(srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	unused, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer unused.Close()
	// The server accepts in order: once this request is answered, the
	// unused connection is accepted too.
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with an unused connection open = %v", err)
	}
	<-served
	// The server closed the unused connection: a read ends at once.
	_ = unused.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := unused.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read on the unused connection: %v, want it closed", err)
	}
	for range 2 {
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("the hook did not see both connections closed")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[http.StateNew] != 2 || seen[http.StateActive] != 1 || seen[http.StateClosed] != 2 {
		t.Errorf("the earlier hook saw %v", seen)
	}
}
