//go:build chaos

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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
// its reason. Half the kills come once dialogues run, so that records are
// written between kills, each lifetime at most its share of the 24 configs
// so that some are left for the victims.
func TestChaosEditor(t *testing.T) {
	kills := 10
	if s := os.Getenv("DIALOGFARM_CHAOS_KILLS"); s != "" {
		var err error
		if kills, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	chaosEditor(t, chaosCase{n: 24, sessions: 2, kills: kills, wallClock: true,
		victims: []string{"code-server", "chromium"}, limit: 15 * time.Minute})
}

// TestChaosEditorRemoteWorkers is `make chaos` for a farm without a
// shared folder: `farm serve`, two workers that cannot see the
// coordinator's folder (each in a private mount namespace where it is an
// empty tmpfs, so the repository comes through the farm's object store),
// and `run --nats --sessions 0 --farm-backlog 3`. A worker is killed with SIGKILL in the
// middle of the run and started again (on its repository cache), then
// the run itself (and resumed), then the farm server (and started again on
// its store and port). At the end every config has exactly one record.
func TestChaosEditorRemoteWorkers(t *testing.T) {
	root := editorRoot(t)
	tmp := shortTempDir(t, "df-chaosfarm-")
	bin := buildBinary(t, tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	const n = 10
	model := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		reply := runAnswer(r)
		if r.Model != "judge" {
			reply.Delay = 2 * time.Second
		}
		return reply
	})
	cfgPath := twoCoderConfig(t, tmp, model.URL)
	// Limits for coder-a, which the workers share through the farm: its
	// calls book there, and take slots of its farm_max_concurrency, across
	// the kills (a killed worker's slots free after their lease; each
	// worker keeps its own while the farm server is down).
	yaml, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	yaml = []byte(strings.Replace(string(yaml), "model: coder-a}", "model: coder-a, rpm: 600, tpm: 2000000, farm_max_concurrency: 3}", 1))
	if err := os.WriteFile(cfgPath, yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	coordDir := filepath.Join(tmp, "coordinator")
	if err := os.MkdirAll(coordDir, 0o700); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(coordDir, "run")
	records := filepath.Join(out, "dialogues.jsonl")

	type proc struct {
		cmd    *exec.Cmd
		log    *lockedBuffer
		exited chan struct{}
	}
	// stop ends a process as Ctrl+C would, and kills it after 30 s.
	stop := func(p *proc) {
		_ = p.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.exited
		}
	}
	start := func(cmd *exec.Cmd) *proc {
		p := &proc{cmd: cmd, log: &lockedBuffer{}, exited: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = p.log, p.log
		cmd.WaitDelay = 10 * time.Second // a killed process's children may hold its output open
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = cmd.Wait(); close(p.exited) }()
		t.Cleanup(func() { stop(p) })
		return p
	}
	kill := func(p *proc, what string) {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
		t.Logf("killed %s with SIGKILL: %d records", what, countLinesIfAny(records))
	}
	port := freeTCPPort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	serve := func() *proc {
		p := start(exec.CommandContext(ctx, bin, "farm", "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port),
			"--store", filepath.Join(tmp, "store"), "--workers", "2"))
		for !strings.Contains(p.log.String(), "other nodes of a cluster") {
			select {
			case <-p.exited:
				t.Fatalf("farm serve: %s", p.log)
			case <-time.After(50 * time.Millisecond):
			}
		}
		return p
	}
	srv := serve()
	creds := regexp.MustCompile(`(?m)^    dialogfarm (?:worker|run) --nats \S+ --creds (\S+)`).FindAllStringSubmatch(srv.log.String(), -1)
	if len(creds) != 3 {
		t.Fatalf("farm serve's hand-out:\n%s", srv.log)
	}
	coordCreds := creds[0][1]
	worker := func(i int) *proc {
		return start(isolated(ctx, t, coordDir, bin, "worker", "--nats", url, "--creds", creds[i+1][1], "--root", root,
			"--config", cfgPath, "--sessions", "1", "--out", filepath.Join(tmp, fmt.Sprintf("worker%d", i+1))))
	}
	workers := []*proc{worker(0), worker(1)}
	runArgs := []string{"run", "--root", root, "--config", cfgPath, "--profile", "default", "--repos", filepath.Join(root, "examples", "sample-repo"),
		"--n", strconv.Itoa(n), "--seed", "5", "--out", out, "--nats", url, "--creds", coordCreds, "--sessions", "0",
		// A backlog under the 10 configs: the run enqueues as outcomes
		// come, across its kill and the farm server's.
		"--farm-backlog", "3"}
	lifetime := func() *proc { return start(exec.CommandContext(ctx, bin, runArgs...)) }
	run := lifetime()
	wait := func(p *proc, records int, what string) bool {
		if !waitForLinesIn(p.exited, 10*time.Minute, records, filepath.Join(out, "dialogues.jsonl")) {
			select {
			case <-p.exited:
				t.Logf("the run ended before %s", what)
				return false
			default:
				t.Fatalf("no %d records before %s:\n%s", records, what, p.log)
			}
		}
		return true
	}
	firstLife := ""
	if wait(run, 2, "killing worker 1") {
		kill(workers[0], "worker 1")
		firstLife = workers[0].log.String()
		workers[0] = worker(0)
	}
	if wait(run, 4, "killing the run") {
		kill(run, "the run")
		run = lifetime()
	}
	if wait(run, 6, "killing the farm server") {
		kill(srv, "the farm server")
		srv = serve()
	}
	select {
	case <-run.exited:
		if code := run.cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
			t.Fatalf("the run: %s\n%s", run.cmd.ProcessState, run.log)
		}
	case <-time.After(10 * time.Minute):
		t.Fatalf("the run did not finish:\n%s\nworker 1:\n%s\nworker 2:\n%s", run.log, workers[0].log, workers[1].log)
	}
	var dialogues []dialog.Dialogue
	readJSONL(t, records, &dialogues)
	seen, ok := map[string]int{}, 0
	for _, d := range dialogues {
		seen[d.ConfigID]++
		if d.Status == dialog.StatusOK {
			ok++
		}
		if !strings.HasPrefix(d.Config.Repo, coordDir) {
			t.Errorf("%s's record names repository %s", d.ConfigID, d.Config.Repo)
		}
	}
	if len(dialogues) != n || len(seen) != n {
		t.Errorf("%d records for %d configs, want %d each once: %v", len(dialogues), len(seen), n, seen)
	}
	if strings.Contains(firstLife, "fetched repository from the farm") && strings.Contains(workers[0].log.String(), "fetched repository from the farm") {
		t.Errorf("worker 1, started again, fetched the repository again instead of using its cache:\n%s", workers[0].log)
	}
	for _, w := range workers {
		stop(w)
	}
	for i := range workers {
		if left := processesUsing(filepath.Join(tmp, fmt.Sprintf("worker%d", i+1))); len(left) != 0 {
			t.Errorf("processes of worker %d still alive after it stopped: %v", i+1, left)
		}
	}
	t.Logf("%d records (%d ok) after killing a worker, the run and the farm server", len(dialogues), ok)
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
