package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"dialogfarm/internal/llmtest"
)

// asCLI makes the test binary run main() with its arguments instead of the
// tests, so a test can send it a signal as a user's terminal would.
const asCLI = "BE_DIALOGFARM_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		main()
		os.Exit(0)
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// TestSignalStopsEveryStage starts a stage that waits on a model which
// never answers, sends SIGINT once the model has the request, and checks
// the process ends with a clear message and exit status 130, and that the
// file the stage would have written is as it was (nothing half-written).
// The time from signal to exit is logged.
func TestSignalStopsEveryStage(t *testing.T) {
	// One channel per model, so a late request of one case is never
	// taken for the next case's.
	arrived := map[string]chan struct{}{"judge-slow": make(chan struct{}, 1), "slow": make(chan struct{}, 1)}
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		select {
		case arrived[r.Model] <- struct{}{}:
		default:
		}
		return llmtest.Reply{Delay: time.Hour} // released when the client goes
	})
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	runFront(t, "plan", "--profile", "default", "--n", "20", "--out", plan)
	cfg := writePoolYAML(t, "judge:\n  endpoint: {base_url: \""+srv.URL+"\", model: judge-slow}\n")
	cases := []struct {
		name, model string
		out         string
		args        []string
	}{
		{"judge", "judge-slow", filepath.Join(dir, "judged.jsonl"),
			[]string{"judge", "--config", cfg, "--in", fixtureDialogues(t)}},
		{"configs", "slow", filepath.Join(dir, "configs.jsonl"),
			[]string{"configs", "--plan", plan, "--repos", "../../examples/sample-repo", "--model-base-url", srv.URL, "--model", "slow"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(c.out, []byte("earlier output\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], append(c.args, "--out", c.out)...)
			cmd.Env = append(os.Environ(), asCLI+"=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-arrived[c.model]:
			case err := <-exited:
				t.Fatalf("exited before calling the model: %v\n%s", err, stderr.String())
			}
			sent := time.Now()
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(time.Minute): // a guard against hanging, not a speed check
				cmd.Process.Kill()
				t.Fatalf("still running a minute after SIGINT\n%s", stderr.String())
			}
			t.Logf("%s exited %v after SIGINT", c.name, time.Since(sent).Round(time.Millisecond))
			if cmd.ProcessState.ExitCode() != 130 {
				t.Errorf("exit: %v, want status 130", err)
			}
			if !strings.Contains(stderr.String(), "dialogfarm: stopped (interrupt signal received)") {
				t.Errorf("stderr does not say it was stopped by the signal:\n%s", stderr.String())
			}
			if got, _ := os.ReadFile(c.out); string(got) != "earlier output\n" {
				t.Errorf("%s changed: %.80q", c.out, got)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), "tmp") {
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}
