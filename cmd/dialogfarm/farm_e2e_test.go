package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
)

// TestFarmServeTwoWorkers runs a farm of many machines on one, as docs/farm.md's
// "Many machines" section says: `farm serve` holds the queue on a loopback
// address and makes a coordinator's and two workers' credentials, two
// `worker --sessions 1` processes (each with its own code-server and
// Chromium, each with its own credentials, started with the line farm
// serve printed, each in a private mount namespace where the
// coordinator's folder is an empty tmpfs) pull jobs and fetch the
// repository from the farm, and `run --nats --sessions 0`
// enqueues the configs and collects the records into its run folder. Every
// config must have exactly one record there, both workers must have driven
// some, and `status --nats` must show both workers healthy. The first
// worker serves Prometheus metrics: its dialogues and its editor's CPU and
// memory.
func TestFarmServeTwoWorkers(t *testing.T) {
	root := editorRoot(t)
	tmp := shortTempDir(t, "df-farm-")
	bin := buildBinary(t, tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// The farm server, on any free loopback port, with the credentials it
	// makes on its first start; its first line names it, the next ones
	// say which file goes to which machine and what to run there.
	serve := exec.CommandContext(ctx, bin, "farm", "serve", "--listen", "127.0.0.1:0", "--store", filepath.Join(tmp, "store"), "--workers", "2")
	serveOut, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var serveErr bytes.Buffer
	serve.Stderr = &serveErr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer stopProcess(serve)
	var handout strings.Builder
	for lines := bufio.NewReader(serveOut); !strings.Contains(handout.String(), "other nodes of a cluster"); {
		line, err := lines.ReadString('\n')
		handout.WriteString(line)
		if err != nil {
			t.Fatalf("farm serve: %v\n%s\n%s", err, handout.String(), serveErr.String())
		}
	}
	m := regexp.MustCompile(`serving on (nats://\S+)`).FindStringSubmatch(handout.String())
	workerCmds := regexp.MustCompile(`(?m)^    dialogfarm worker --nats (\S+) --creds (\S+)$`).FindAllStringSubmatch(handout.String(), -1)
	coord := regexp.MustCompile(`(?m)^    dialogfarm run --nats \S+ --creds (\S+) `).FindStringSubmatch(handout.String())
	if m == nil || len(workerCmds) != 2 || coord == nil {
		t.Fatalf("farm serve's hand-out:\n%s", handout.String())
	}
	url, coordCreds := m[1], coord[1]
	go func() { _, _ = io.Copy(io.Discard, serveOut) }()

	model := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		reply := runAnswer(r)
		if r.Model != "judge" {
			reply.Delay = time.Second // a dialogue lasts longer than a pull, so both workers get some
		}
		return reply
	})
	cfgPath := twoCoderConfig(t, tmp, model.URL)

	coordDir := filepath.Join(tmp, "coordinator")
	if err := os.MkdirAll(coordDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Two workers, each with its own editor and one simulator; the
	// first serves its metrics on a free port.
	var workers []*exec.Cmd
	var workerLogs []*lockedBuffer
	for i := range 2 {
		// The printed line, as a user pastes it on each machine.
		args := []string{"worker", "--nats", workerCmds[i][1], "--creds", workerCmds[i][2], "--root", root, "--config", cfgPath,
			"--sessions", "1", "--out", filepath.Join(tmp, fmt.Sprintf("worker%d", i+1))}
		if i == 0 {
			args = append(args, "--metrics-addr", "127.0.0.1:0")
		}
		// The coordinator's folder (its run folder and the sanitised
		// copies in it) is hidden from the worker: the repository comes
		// through the farm.
		w := isolated(ctx, t, coordDir, bin, args...)
		log := &lockedBuffer{}
		w.Stdout, w.Stderr = log, log
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		defer stopProcess(w)
		workers, workerLogs = append(workers, w), append(workerLogs, log)
	}
	status := func(args ...string) string {
		out, err := exec.CommandContext(ctx, bin, append([]string{"status", "--nats", url, "--creds", coordCreds}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("status --nats: %v\n%s", err, out)
		}
		return string(out)
	}
	// The run starts once both workers pull (they report health when
	// their editor and window are up), so neither takes every job while
	// the other is still starting.
	healthy := regexp.MustCompile(`(?m)^worker \S+ on \S+: healthy`)
	for tick := time.NewTicker(500 * time.Millisecond); len(healthy.FindAllString(status(), -1)) < 2; {
		select {
		case <-ctx.Done():
			t.Fatalf("the workers did not both report health:\n%s\n%s\n%s", status(), workerLogs[0], workerLogs[1])
		case <-tick.C:
		}
	}

	// A run of n configs started where the coordinator is, into its
	// folder; the workers drive it.
	startRun := func(name string, n int, seed string) string {
		out := filepath.Join(coordDir, name)
		run := exec.CommandContext(ctx, bin, "run", "--root", root, "--config", cfgPath, "--profile", "default",
			"--repos", filepath.Join(root, "examples", "sample-repo"), "--n", strconv.Itoa(n), "--seed", seed, "--out", out,
			"--nats", url, "--creds", coordCreds, "--sessions", "0")
		if runOut, err := run.CombinedOutput(); err != nil {
			t.Fatalf("%s: run --nats: %v\n%s\nworker 1:\n%s\nworker 2:\n%s", name, err, runOut, workerLogs[0], workerLogs[1])
		}
		return out
	}
	const n = 5
	out := startRun("run", n, "7")

	dialogues := oneOKRecordPerConfig(t, out, n)
	perWorker := map[string]int{}
	for _, d := range dialogues {
		perWorker[d.Worker]++
	}
	// Worker ids are host-pid.
	for _, w := range workers {
		id := fmt.Sprintf("-%d", w.Process.Pid)
		did := 0
		for k, c := range perWorker {
			if strings.HasSuffix(k, id) {
				did += c
			}
		}
		if did == 0 {
			t.Errorf("worker pid %d drove none of the records (records per worker: %v)", w.Process.Pid, perWorker)
		}
	}
	t.Logf("records per worker: %v", perWorker)
	// Each worker fetched the repository once, into its own folder, and
	// the records name the coordinator's copy.
	for i, log := range workerLogs {
		if n := strings.Count(log.String(), "fetched repository from the farm"); n != 1 {
			t.Errorf("worker %d fetched the repository %d times:\n%s", i+1, n, log)
		}
	}
	for _, d := range dialogues {
		if !strings.HasPrefix(d.Config.Repo, coordDir) {
			t.Errorf("config %s's record names repository %s, not the coordinator's copy", d.ConfigID, d.Config.Repo)
		}
	}

	// The farm's status, while the workers still run: both healthy, their
	// counts adding up to the run's records, and none of the run's
	// outcomes left on the farm.
	var farmRun struct {
		Run string `json:"run"`
	}
	data, err := os.ReadFile(filepath.Join(out, "farm.json"))
	if err == nil {
		err = json.Unmarshal(data, &farmRun)
	}
	if err != nil {
		t.Fatalf("the run's farm.json: %v", err)
	}
	// Workers refresh their health every few seconds: wait for the counts
	// of the run's last records.
	okSum := func(st string) int {
		sum := 0
		for _, m := range regexp.MustCompile(`(?m)^worker \S+ on \S+: healthy, \d+/1 simulators busy, (\d+) ok`).FindAllStringSubmatch(st, -1) {
			k, _ := strconv.Atoi(m[1])
			sum += k
		}
		return sum
	}
	st := status("--run", farmRun.Run)
	for tick := time.NewTicker(time.Second); okSum(st) < n; st = status("--run", farmRun.Run) {
		select {
		case <-ctx.Done():
			t.Fatalf("workers' health counts %d ok, want %d:\n%s", okSum(st), n, st)
		case <-tick.C:
		}
	}
	t.Logf("status --nats:\n%s", st)
	// The run collected its records: the farm keeps none of its outcomes.
	if !strings.Contains(st, "0 results, 0 dead letters") {
		t.Errorf("status --nats counts results of the collected run:\n%s", st)
	}
	if got := len(healthy.FindAllString(st, -1)); got != 2 || okSum(st) != n {
		t.Errorf("status --nats shows %d healthy workers with %d ok, want 2 with %d:\n%s", got, okSum(st), n, st)
	}
	// Each worker reports its editor's CPU and memory (a code-server and
	// a Chromium take hundreds of MiB), and its line ends with the key it
	// authenticated with.
	editors := regexp.MustCompile(`(?m)^worker .*; editor \d+\.\d\d cores, (\d+) MiB; key U[A-Z2-7]{7}…$`).FindAllStringSubmatch(st, -1)
	for _, m := range editors {
		if mib, _ := strconv.Atoi(m[1]); mib < 200 {
			t.Errorf("a worker's editor takes %d MiB:\n%s", mib, st)
		}
	}
	if len(editors) != 2 {
		t.Errorf("status --nats shows the editors of %d workers, want 2:\n%s", len(editors), st)
	}
	checkWorkerMetrics(t, workerLogs[0].String(), fmt.Sprintf("-%d", workers[0].Process.Pid), perWorker)

	local, err := exec.CommandContext(ctx, bin, "status", out).CombinedOutput()
	if err != nil {
		t.Fatalf("status %s: %v\n%s", out, err, local)
	}
	if !regexp.MustCompile(`records per simulator: \S+-\d+/s1 \d+, \S+-\d+/s1 \d+\n`).Match(local) {
		t.Errorf("status of the run folder does not count records per worker's simulator:\n%s", local)
	}

	// A second run on the same standing workers, as docs/farm.md tells a
	// farm of many short runs to do: every config gets its one record, and
	// the workers drive it in the windows they opened for the first run,
	// with the repository they already fetched.
	logins := func(i int) int { return strings.Count(workerLogs[i].String(), "logged in to code-server") }
	before := []int{logins(0), logins(1)}
	const n2 = 3
	out2 := startRun("run2", n2, "8")
	oneOKRecordPerConfig(t, out2, n2)
	for i := range workerLogs {
		if got := logins(i); got != before[i] || got != 1 {
			t.Errorf("worker %d logged in to code-server %d times (%d before the second run), want once: its window should stand", i+1, got, before[i])
		}
		if got := strings.Count(workerLogs[i].String(), "fetched repository from the farm"); got != 1 {
			t.Errorf("worker %d fetched the repository %d times over two runs of it, want once:\n%s", i+1, got, workerLogs[i])
		}
	}
}

// oneOKRecordPerConfig checks that the run folder out has n configs and
// exactly one record for each, ok, and returns the records.
func oneOKRecordPerConfig(t *testing.T, out string, n int) []dialog.Dialogue {
	t.Helper()
	var configs []dialog.ChatConfig
	readJSONL(t, filepath.Join(out, "configs.jsonl"), &configs)
	var dialogues []dialog.Dialogue
	readJSONL(t, filepath.Join(out, "dialogues.jsonl"), &dialogues)
	if len(configs) != n {
		t.Fatalf("%s: %d configs, want %d", out, len(configs), n)
	}
	perConfig := map[string]int{}
	for _, d := range dialogues {
		perConfig[d.ConfigID]++
		if d.Status != dialog.StatusOK {
			t.Errorf("%s: config %s: %s at %s: %s", out, d.ConfigID, d.Status, d.FailedStep, d.Error)
		}
	}
	for _, c := range configs {
		if perConfig[c.ID] != 1 {
			t.Errorf("%s: config %s has %d records, want 1", out, c.ID, perConfig[c.ID])
		}
	}
	if len(dialogues) != n {
		t.Errorf("%s: %d records, want %d", out, len(dialogues), n)
	}
	return dialogues
}

// checkWorkerMetrics scrapes the metrics a worker's log says it serves:
// one simulator, as many ok dialogues as the run's records say the worker
// (its id ends in idSuffix) drove, and the CPU and memory of its
// code-server and Chromium.
func checkWorkerMetrics(t *testing.T, log, idSuffix string, perWorker map[string]int) {
	t.Helper()
	murl := regexp.MustCompile(`http://127\.0\.0\.1:\d+/metrics`).FindString(log)
	if murl == "" {
		t.Fatalf("the worker's log names no metrics address:\n%s", log)
	}
	resp, err := http.Get(murl)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	id := ""
	for k := range perWorker {
		if strings.HasSuffix(k, idSuffix) {
			id = k
		}
	}
	value := func(series string) float64 {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
		if m == nil {
			t.Errorf("no %s in the worker's metrics", series)
			return 0
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Errorf("%s: %v", series, err)
		}
		return v
	}
	w := `worker="` + id + `"`
	if got := value(`dialogfarm_simulators{` + w + `}`); got != 1 {
		t.Errorf("dialogfarm_simulators %v, want 1", got)
	}
	if got := value(`dialogfarm_dialogues_total{status="ok",` + w + `}`); got != float64(perWorker[id]) {
		t.Errorf("the worker's metrics count %v ok dialogues, its records %d", got, perWorker[id])
	}
	if got := value(`dialogfarm_editor_cpu_seconds_total{class="chromium-renderer",group="chromium",` + w + `}`); got < 1 {
		t.Errorf("the worker's Chromium renderers used %v CPU-s", got)
	}
	for _, s := range []string{`{class="chromium-renderer",group="chromium",`, `{class="code-server-main",group="code-server",`} {
		if got := value(`dialogfarm_editor_resident_memory_bytes` + s + w + `}`); got < 20<<20 {
			t.Errorf("dialogfarm_editor_resident_memory_bytes%s: %v bytes", s, got)
		}
	}
	if t.Failed() {
		t.Logf("metrics of worker %s:\n%s", id, body)
	}
}

// lockedBuffer is a bytes.Buffer a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// stopProcess ends a long-running command as Ctrl+C would and waits for it.
func stopProcess(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}
