package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
)

// TestOneModelTakesEverySimulatorAtOnce: with n simulators, n requests
// reach the fake model together; none waits for a slot of the pool
// member (whose default is 4), which would add to the model time the
// capture measures.
func TestOneModelTakesEverySimulatorAtOnce(t *testing.T) {
	const n = 8
	var (
		mu      sync.Mutex
		arrived int
	)
	all := make(chan struct{})
	model := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		mu.Lock()
		if arrived++; arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return llmtest.Reply{Text: "together"}
		case <-time.After(10 * time.Second):
			return llmtest.Reply{Text: "alone"}
		}
	})
	resp, err := oneModel(model.URL, "bench-model", n, 10*time.Second, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	answers := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := capture.Request{Session: fmt.Sprint("s", i), Seq: 1, Model: "bench-model", Stream: true, N: 1,
				Messages: []dialog.Message{{Role: "user", Content: fmt.Sprint("question ", i)}}}
			ans, err := resp.Respond(ctx, req)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			answers[i] = ans.Text
		}()
	}
	wg.Wait()
	for i, a := range answers {
		if a != "together" {
			t.Errorf("request %d answered %q: it did not reach the model while the other %d were in flight", i, a, n-1)
		}
	}
}
