package workbench

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/capture"
)

// A late exchange of config A's turn 1 — its answer completes only after
// the simulator has moved on to config B — is labelled A/1 by the capture
// endpoint and skipped by the driver, which takes B's own exchange for B's
// turn 1. (Without the labels, Next hands out A's exchange first.)
func TestLateExchangeNotAttachedToNextConfig(t *testing.T) {
	arrived, release := make(chan string, 2), make(chan struct{})
	responder := capture.ResponderFunc(func(ctx context.Context, req capture.Request) (capture.Answer, error) {
		q := req.Messages[len(req.Messages)-1].Content
		arrived <- q
		if q == "question of A" {
			select {
			case <-release:
			case <-ctx.Done():
				return capture.Answer{}, ctx.Err()
			}
		}
		return capture.Answer{Text: "answer to " + q}, nil
	})
	log := zaptest.NewLogger(t)
	srv, err := capture.Listen(t.Context(), capture.DefaultConfig(), responder, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	post := func(q string) chan error {
		done := make(chan error, 1)
		go func() {
			body := `{"model":"m","messages":[{"role":"user","content":"` + q + `"}]}`
			resp, err := http.Post(srv.BaseURL("sim-1")+"/chat/completions", "application/json", strings.NewReader(body))
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		return done
	}

	srv.Expect("sim-1", "config-A", 1)
	aDone := post("question of A")
	if q := <-arrived; q != "question of A" {
		t.Fatalf("first request %q", q)
	}
	// Config A timed out; the simulator moves on to config B.
	srv.Expect("sim-1", "config-B", 1)
	close(release) // A's answer completes now, late
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	bDone := post("question of B")

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ex, err := takeExchange(ctx, srv, "sim-1", "config-B", 1, log)
	if err != nil {
		t.Fatal(err)
	}
	if ex.ConfigID != "config-B" || ex.Turn != 1 || ex.Answer != "answer to question of B" || ex.Seq != 2 {
		t.Errorf("config B's turn 1 took exchange %d (%s/%d) answered %q", ex.Seq, ex.ConfigID, ex.Turn, ex.Answer)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	all := srv.Exchanges("sim-1")
	if len(all) != 2 || all[0].ConfigID != "config-A" || all[0].Turn != 1 || all[0].Answer != "answer to question of A" {
		t.Errorf("recorded exchanges %+v", all)
	}
}
