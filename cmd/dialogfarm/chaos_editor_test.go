package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
)

// chaosCase is one editor chaos run: `dialogfarm run` over n configs with
// sessions simulators, SIGKILLed kills times, then with each victim
// process (code-server, chromium) killed in the middle of a dialogue.
type chaosCase struct {
	n, sessions, kills int
	// wallClock kills a lifetime at a random moment in wall time (the
	// full version: it also hits planning and editor start-up); false
	// kills it at a random pool request, in the middle of a dialogue.
	wallClock bool
	victims   []string
	limit     time.Duration // for each lifetime that must finish
}

// TestChaosEditorShort is the short editor chaos of `make test`: one
// SIGKILL of `dialogfarm run` mid-dialogue then a resume, code-server
// killed mid-dialogue, and 20% of model calls failing; every config ends
// with exactly one record.
func TestChaosEditorShort(t *testing.T) {
	chaosEditor(t, chaosCase{n: 4, sessions: 1, kills: 1, victims: []string{"code-server"}, limit: 8 * time.Minute})
}

func chaosEditor(t *testing.T, cc chaosCase) {
	root := editorRoot(t)
	tmp := shortTempDir(t, "df-chaos-")
	bin := buildBinary(t, tmp)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	var mu sync.Mutex
	roll := func() float64 { mu.Lock(); defer mu.Unlock(); return rng.Float64() }
	// Every pool request is an observable moment in some dialogue. While
	// held is set, a pool request waits for it to close before it is
	// answered, so that the dialogue is still in flight when a victim is
	// killed (a fast answer could finish it first).
	asked := make(chan struct{}, 1)
	var held atomic.Pointer[chan struct{}]
	model := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if r.Model == "judge" {
			return runAnswer(r)
		}
		select {
		case asked <- struct{}{}:
		default:
		}
		if h := held.Load(); h != nil {
			select {
			case <-*h:
			case <-time.After(cc.limit):
			}
		}
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
		return runAnswer(r)
	})
	// midDialogue waits until the run's dialogue in flight asks the model
	// (a request after this call), or the run exits.
	midDialogue := func(exited <-chan struct{}) bool {
		select {
		case <-asked:
		default:
		}
		select {
		case <-asked:
			return true
		case <-exited:
			t.Logf("the run ended before a dialogue was under way")
			return false
		case <-time.After(cc.limit):
			t.Fatalf("no model request in %s", cc.limit)
			return false
		}
	}
	cfgPath := filepath.Join(tmp, "dialogfarm.yaml")
	yaml := "pool:\n  members:\n" +
		"    - {name: coder-a, base_url: " + model.URL + ", model: coder-a, timeout: 5s}\n" +
		"    - {name: coder-b, base_url: " + model.URL + ", model: coder-b, timeout: 5s}\n" +
		"judge:\n  endpoint: {base_url: " + model.URL + ", model: judge}\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "run")
	args := []string{"run", "--root", root, "--config", cfgPath, "--profile", "default", "--sessions", strconv.Itoa(cc.sessions),
		"--repos", filepath.Join(root, "examples", "sample-repo"), "--n", strconv.Itoa(cc.n), "--seed", "11", "--out", out}
	records := filepath.Join(out, "dialogues.jsonl")
	attemptsFile := filepath.Join(out, "attempts.jsonl")
	// start starts a lifetime of the run; exited is closed when it ends
	// (then cmd.ProcessState says how).
	start := func() (cmd *exec.Cmd, log *bytes.Buffer, exited <-chan struct{}) {
		cmd = exec.Command(bin, args...)
		log = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		return cmd, log, done
	}
	// finish waits for a run to end by itself: exit 0, or 1 when some
	// config is recorded failed.
	finish := func(cmd *exec.Cmd, log *bytes.Buffer, exited <-chan struct{}, what string) {
		select {
		case <-exited:
			if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
				t.Fatalf("%s: %s\n%s", what, cmd.ProcessState, log.String())
			}
		case <-time.After(cc.limit):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-exited
			t.Fatalf("%s did not finish in %s:\n%s", what, cc.limit, log.String())
		}
	}
	began := time.Now()
	// Configs the kills leave for the victims: a dialogue in flight and
	// one after it each, and two to spare (a kill can land a record late).
	reserve := 2*len(cc.victims) + 2

	for i := range cc.kills {
		cmd, _, exited := start()
		var when string
		if cc.wallClock {
			// Even kills at a random moment from the start (planning,
			// editor start-up, the first dialogues); odd ones at a
			// random moment once the lifetime's dialogues run (its first
			// model request), so that records are written between kills.
			from := "start"
			if i%2 == 1 {
				if !midDialogue(exited) {
					t.Logf("lifetime %d ended by itself", i+1)
					continue
				}
				from = "the first model request"
			}
			wait := time.Duration(roll()*float64(15*time.Second)) + 5*time.Second
			if from == "start" {
				wait = time.Duration(5+roll()*40) * time.Second
			}
			// A lifetime records at most its share of the configs the
			// victims do not need: the kill comes at the random moment
			// or once that share is recorded, whichever is first (with
			// fast windows, random moments alone left no config for the
			// victims).
			have := countLinesIfAny(records)
			share := max((cc.n-reserve-have)/(cc.kills-i), 0)
			reached := waitForLinesIn(exited, wait, have+share, records)
			select {
			case <-exited:
				t.Logf("lifetime %d ended by itself", i+1)
				continue
			default:
			}
			when = wait.Round(time.Second).String() + " from " + from
			if reached {
				when = fmt.Sprintf("its share of %d records, before %s", share, when)
			}
		} else {
			// At a random pool request of this lifetime's first two dialogues.
			for k := 1 + int(roll()*4); k > 0; k-- {
				if !midDialogue(exited) {
					break
				}
			}
			when = "a model request"
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		t.Logf("kill %d after %s: %d records", i+1, when, countLinesIfAny(records))
	}

	// In one lifetime, each victim killed in the middle of a dialogue: the
	// dialogues in flight fail, are retried on a restarted editor or a
	// relaunched browser, and the run finishes by itself.
	if len(cc.victims) > 0 {
		if left := cc.n - countLinesIfAny(records); left < 2*len(cc.victims) {
			t.Errorf("only %d configs left for %d victims: raise n", left, len(cc.victims))
		}
		cmd, log, exited := start()
		for _, victim := range cc.victims {
			before := countLinesIfAny(attemptsFile) + countLinesIfAny(records)
			hold := make(chan struct{})
			held.Store(&hold)
			if !midDialogue(exited) {
				held.Store(nil)
				close(hold)
				t.Errorf("the run ended before %s could be killed mid-dialogue", victim)
				break
			}
			killed := 0
			for _, pid := range processesUsing(out) {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
				if strings.Contains(string(cmdline), victim) && syscall.Kill(pid, syscall.SIGKILL) == nil {
					killed++
				}
			}
			held.Store(nil)
			close(hold)
			if killed == 0 {
				t.Fatalf("no %s process of the run to kill", victim)
			}
			// The failed attempt (or record) of the dialogue in flight.
			if !waitForLinesIn(exited, cc.limit, before+1, attemptsFile, records) {
				t.Fatalf("killing %s mid-dialogue left no failed attempt or record:\n%s", victim, log.String())
			}
			t.Logf("killed %d %s processes mid-dialogue; %d records", killed, victim, countLinesIfAny(records))
		}
		finish(cmd, log, exited, "the run after killing "+strings.Join(cc.victims, " and "))
		if slices.Contains(cc.victims, "code-server") && !strings.Contains(readIfAny(attemptsFile)+readIfAny(records), "code-server exited mid-dialogue") {
			t.Errorf("no attempt or record says code-server exited mid-dialogue:\n%s", log.String())
		}
	}
	cmd, log, exited := start()
	finish(cmd, log, exited, "the final run")
	if left := processesUsing(out); len(left) != 0 {
		t.Errorf("processes of the run still alive after it ended: %v", left)
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
	if len(dialogues) != cc.n || len(seen) != cc.n {
		t.Errorf("%d records for %d configs, want %d each once: %v", len(dialogues), len(seen), cc.n, seen)
	}
	var attempts []dialog.Dialogue
	if _, err := os.Stat(attemptsFile); err == nil {
		readJSONL(t, attemptsFile, &attempts)
	}
	for _, a := range attempts {
		if a.Status == dialog.StatusOK || a.Error == "" {
			t.Errorf("attempt of %s kept with status %q and no reason", a.ConfigID, a.Status)
		}
	}
	t.Logf("%d records (%d ok), %d failed attempts kept, after %d kills and %d victims, in %s",
		len(dialogues), ok, len(attempts), cc.kills, len(cc.victims), time.Since(began).Round(time.Second))
}

func countLinesIfAny(path string) int {
	data, _ := os.ReadFile(path)
	return bytes.Count(data, []byte("\n"))
}

// waitForLinesIn waits until the files together have at least n lines,
// the process exits, or the time is up.
func waitForLinesIn(exited <-chan struct{}, limit time.Duration, n int, paths ...string) bool {
	deadline := time.After(limit)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	have := func() bool {
		lines := 0
		for _, p := range paths {
			lines += countLinesIfAny(p)
		}
		return lines >= n
	}
	for {
		if have() {
			return true
		}
		select {
		case <-exited:
			return have()
		case <-deadline:
			return false
		case <-tick.C:
		}
	}
}

func readIfAny(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}
