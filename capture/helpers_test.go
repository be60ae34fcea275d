package capture

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"dialogfarm/dialog"
)

// testLogger logs to the test and to an observer the test can search.
func testLogger(tb testing.TB) (*zap.Logger, *observer.ObservedLogs) {
	tb.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(zapcore.NewTee(zaptest.NewLogger(tb).Core(), core)), logs
}

// logsMention reports whether any observed entry mentions s, in its message
// or any field.
func logsMention(logs *observer.ObservedLogs, s string) bool {
	for _, e := range logs.All() {
		if strings.Contains(e.Message, s) || strings.Contains(fmt.Sprint(e.ContextMap()), s) {
			return true
		}
	}
	return false
}

// startServer runs an endpoint for the test and shuts it down afterwards.
func startServer(tb testing.TB, r Responder, sink Sink) (*Server, *observer.ObservedLogs) {
	tb.Helper()
	log, logs := testLogger(tb)
	s, err := Listen(context.Background(), DefaultConfig(), r, sink, log)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			tb.Error(err)
		}
	})
	return s, logs
}

// post sends body as is and returns the status, headers and whole body.
func post(tb testing.TB, url, body string, header map[string]string) (int, http.Header, []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// nextNow returns the session's next exchange, failing if none comes soon.
func nextNow(tb testing.TB, s *Server, session string) dialog.Exchange {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ex, err := s.Next(ctx, session)
	if err != nil {
		tb.Fatal(err)
	}
	return ex
}

// openaiClient is a go-openai client with base URL baseURL and key.
func openaiClient(baseURL, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = baseURL
	return openai.NewClientWithConfig(cfg)
}

// fixed answers every request with text.
func fixed(text string) Responder {
	return ResponderFunc(func(context.Context, Request) (Answer, error) {
		return Answer{Text: text, Responder: "fixed", Model: "fixed-model"}, nil
	})
}

// memSink keeps recorded exchanges; it fails when err is set.
type memSink struct {
	mu  sync.Mutex
	got []dialog.Exchange
	err error
}

func (m *memSink) Record(ex dialog.Exchange) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, ex)
	return m.err
}

func (m *memSink) exchanges() []dialog.Exchange {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]dialog.Exchange(nil), m.got...)
}
