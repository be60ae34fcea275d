//go:build chaos

package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
)

// TestChaosEditor is `make chaos` with the real editor: `dialogfarm run`
// killed with SIGKILL at random moments (DIALOGFARM_CHAOS_KILLS, default
// 10), code-server and then Chromium killed in the middle of a dialogue,
// and a model whose calls fail 20% of the time (429, 500, a dropped
// stream, a hang past the member's timeout). The run is resumed after each
// kill; at the end every config has exactly one record, ok or failed with
// its reason.
func TestChaosEditor(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	kills := 10
	if s := os.Getenv("DIALOGFARM_CHAOS_KILLS"); s != "" {
		if kills, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dialogfarm")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	var mu sync.Mutex
	roll := func() float64 { mu.Lock(); defer mu.Unlock(); return rng.Float64() }
	model := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if r.Model != "judge" {
			switch p := roll(); {
			case p < 0.05:
				return llmtest.Reply{Status: 429, RetryAfter: "1", Text: "rate limited"}
			case p < 0.10:
				return llmtest.Reply{Status: 500, Text: "upstream broke"}
			case p < 0.15:
				return llmtest.Reply{Text: "cut off in the middle of the answer", DropAfterChunks: 2}
			case p < 0.20:
				return llmtest.Reply{Text: "too late", Delay: 30 * time.Second}
			}
		}
		return runAnswer(r)
	})
	cfgPath := filepath.Join(tmp, "dialogfarm.yaml")
	yaml := "pool:\n  members:\n" +
		"    - {name: coder-a, base_url: " + model.URL + ", model: coder-a, timeout: 5s}\n" +
		"    - {name: coder-b, base_url: " + model.URL + ", model: coder-b, timeout: 5s}\n" +
		"judge:\n  endpoint: {base_url: " + model.URL + ", model: judge}\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "run")
	const n = 12
	args := []string{"run", "--root", root, "--config", cfgPath, "--profile", "default", "--sessions", "2",
		"--repos", filepath.Join(root, "examples", "sample-repo"), "--n", strconv.Itoa(n), "--seed", "11", "--out", out}
	records := filepath.Join(out, "dialogues.jsonl")
	lines := func() int {
		data, _ := os.ReadFile(records)
		return bytes.Count(data, []byte("\n"))
	}

	for i := range kills {
		cmd := exec.Command(bin, args...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		wait := time.Duration(5+roll()*40) * time.Second
		select {
		case <-exited:
			t.Logf("lifetime %d ended by itself", i+1)
			continue
		case <-time.After(wait):
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		t.Logf("kill %d after %s: %d records", i+1, wait, lines())
	}

	// code-server, then Chromium, killed mid-dialogue: the config in
	// flight fails, is retried on a restarted editor, and the run goes on.
	for _, victim := range []string{"code-server", "chromium"} {
		cmd := exec.Command(bin, args...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		before := lines()
		if waitForLines(t, records, before+1, exited, 5*time.Minute) {
			time.Sleep(2 * time.Second) // the next dialogue is under way
			for _, pid := range processesUsing(out) {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
				if strings.Contains(string(cmdline), victim) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			t.Logf("killed %s mid-run", victim)
		}
		select {
		case <-exited:
		case <-time.After(15 * time.Minute):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-exited
			t.Fatalf("run after killing %s did not finish:\n%s", victim, log.String())
		}
	}
	if final, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Logf("final run: %v\n%s", err, final) // failed configs make it exit 1
	}

	var dialogues []dialog.Dialogue
	readJSONL(t, records, &dialogues)
	seen := map[string]int{}
	ok := 0
	for _, d := range dialogues {
		seen[d.ConfigID]++
		if d.Status == dialog.StatusOK {
			ok++
		} else if d.Error == "" {
			t.Errorf("%s failed with no reason", d.ConfigID)
		}
	}
	if len(dialogues) != n || len(seen) != n {
		t.Errorf("%d records for %d configs, want %d each once: %v", len(dialogues), len(seen), n, seen)
	}
	var attempts []dialog.Dialogue
	if _, err := os.Stat(filepath.Join(out, "attempts.jsonl")); err == nil {
		readJSONL(t, filepath.Join(out, "attempts.jsonl"), &attempts)
	}
	t.Logf("%d records (%d ok), %d failed attempts kept, after %d kills", len(dialogues), ok, len(attempts), kills)
}
