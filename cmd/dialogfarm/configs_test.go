package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
)

func runFront(tb testing.TB, args ...string) string {
	tb.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		tb.Fatalf("dialogfarm %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// TestFrontHalfChain runs analyze → plan → configs → report through the
// command line, with the model stand-in classifying and writing queries.
func TestFrontHalfChain(t *testing.T) {
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if strings.HasPrefix(r.LastUser(), "Queries:") {
			var items []struct{ ID string }
			_ = json.Unmarshal([]byte(strings.TrimPrefix(r.LastUser(), "Queries:\n")), &items)
			var parts []string
			for _, it := range items {
				parts = append(parts, `{"id":"`+it.ID+`","intent":"fix","difficulty":"hard"}`)
			}
			return llmtest.Reply{Text: `{"labels":[` + strings.Join(parts, ",") + `]}`}
		}
		return llmtest.Reply{Text: "why does this return the wrong total?"}
	})
	t.Setenv("FRONT_TEST_KEY", "sk-front-secret")
	dir := t.TempDir()
	profile, plan, configs := filepath.Join(dir, "p.yaml"), filepath.Join(dir, "plan.json"), filepath.Join(dir, "configs.jsonl")
	model := []string{"--model-base-url", srv.URL, "--model", "m1", "--api-key-env", "FRONT_TEST_KEY"}

	out := runFront(t, append([]string{"analyze", "--logs", "../../analyst/testdata/logs.jsonl", "--out", profile}, model...)...)
	if !strings.Contains(out, "12 sessions from 16 records; intent and difficulty by llm:m1") || !strings.Contains(out, "logs.jsonl:15: missing query") {
		t.Errorf("analyze output:\n%s", out)
	}
	out = runFront(t, "plan", "--profile", profile, "--n", "60", "--out", plan)
	if !strings.Contains(out, "60 dialogues") {
		t.Errorf("plan output:\n%s", out)
	}
	out = runFront(t, append([]string{"configs", "--plan", plan, "--repos", "../../examples/sample-repo", "--out", configs,
		"--stats", filepath.Join(dir, "stats.json")}, model...)...)
	if !strings.Contains(out, "60 configs") {
		t.Errorf("configs output:\n%s", out)
	}
	data, err := os.ReadFile(configs)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 60 {
		t.Fatalf("%d configs", len(lines))
	}
	var llm int
	for _, l := range lines {
		var c dialog.ChatConfig
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatal(err)
		}
		if c.QuerySource == dialog.QuerySourceLLM {
			llm++
		}
	}
	if llm == 0 {
		t.Error("no model-written query")
	}
	for _, r := range srv.Requests() {
		if r.Header.Get("Authorization") != "Bearer sk-front-secret" {
			t.Fatalf("request without the key from --api-key-env")
		}
	}
	out = runFront(t, "report", "--profile", profile, "--configs", configs, "--json", filepath.Join(dir, "report.json"))
	if !strings.Contains(out, "60 configs, 0 dialogues") || !strings.Contains(out, "JSD produced") {
		t.Errorf("report output:\n%s", out)
	}
	for _, f := range []string{profile, filepath.Join(dir, "p.counts.json"), filepath.Join(dir, "stats.json"), filepath.Join(dir, "report.json")} {
		b, err := os.ReadFile(f)
		if err != nil || bytes.Contains(b, []byte("sk-front-secret")) {
			t.Errorf("%s: %v (or it holds the key)", f, err)
		}
	}
	// The same plan and seed give the same configs.
	again := filepath.Join(dir, "again.jsonl")
	runFront(t, append([]string{"configs", "--plan", plan, "../../examples/sample-repo", "--out", again}, model...)...)
	if b, _ := os.ReadFile(again); !bytes.Equal(b, data) {
		t.Error("configs differ on a second run")
	}
}
