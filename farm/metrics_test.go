package farm

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dialogfarm/internal/procstat"
)

// sumMetric adds up, over ms, the counters or histogram sample counts named
// name whose status label is status (any series when status is "").
func sumMetric(tb testing.TB, ms []*Metrics, name, status string) float64 {
	tb.Helper()
	var sum float64
	for _, m := range ms {
		fams, err := m.reg.Gather()
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() != name {
				continue
			}
			for _, s := range f.GetMetric() {
				match := status == ""
				for _, l := range s.GetLabel() {
					match = match || l.GetName() == "status" && l.GetValue() == status
				}
				switch {
				case !match:
				case s.GetCounter() != nil:
					sum += s.GetCounter().GetValue()
				case s.GetHistogram() != nil:
					sum += float64(s.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return sum
}

// scrape fetches url and returns its samples by series ("name{labels}").
func scrape(tb testing.TB, url string) map[string]float64 {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			tb.Fatalf("sample %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// busyScript keeps a core busy for 30 s at most, without forking (bash
// counts SECONDS).
const busyScript = "while [ $SECONDS -lt 30 ]; do :; done"

// startBusyGroup starts a busy process in a process group of its own, a
// stand-in code-server, and ends it when the test ends; it returns once
// the program runs.
func startBusyGroup(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", busyScript)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Start returns once exec has begun, before the new program's
	// memory is mapped: a reading then found 0 bytes (16% of runs).
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); procstat.Read()[cmd.Process.Pid].RSS < 1<<20; <-tick.C {
		if time.Now().After(deadline) {
			t.Fatal("the busy process did not start")
		}
	}
	return cmd
}

// A worker's health reports its editor's CPU, in cores since its last
// report, and its memory; status shows them.
func TestHealthReportsTheEditor(t *testing.T) {
	editor := startBusyGroup(t)
	w := &Worker{cfg: WorkerConfig{Editors: func() ([]int, int) { return []int{editor.Process.Pid}, 0 }}}
	usage := w.editorUsage()
	start := time.Now()
	if cores, rss := usage(start); cores != 0 || rss < 100<<10 {
		t.Fatalf("first reading: %.2f cores, %d bytes", cores, rss)
	}
	// Wait until the busy process has used half a CPU-second more.
	pid := editor.Process.Pid
	first := procstat.Read()[pid].Ticks
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for deadline := start.Add(10 * time.Second); procstat.Read()[pid].Ticks < first+procstat.ClockTicks/2; <-tick.C {
		if time.Now().After(deadline) {
			t.Fatal("the busy process used no CPU")
		}
	}
	now := time.Now()
	// Over the time between the readings it used at least those half
	// CPU-seconds, and at most one core (a loaded machine gives it less).
	cores, rss := usage(now)
	if used := cores * now.Sub(start).Seconds(); used < 0.45 || cores > 1.2 || rss < 100<<10 {
		t.Errorf("a busy process: %.2f cores (%.2f CPU-s in %s), %d bytes", cores, used, now.Sub(start), rss)
	}
	h := Health{Worker: "w1", Host: "h", Slots: 2, Started: start, Updated: now, EditorCores: cores, EditorRSS: 300 << 20}
	if got := (Status{Workers: []Health{h}}).Text(now); !strings.Contains(got, fmt.Sprintf("; editor %.2f cores, 300 MiB\n", cores)) {
		t.Errorf("status:\n%s", got)
	}
	if cores, rss := (&Worker{}).editorUsage()(now); cores != 0 || rss != 0 {
		t.Errorf("a worker with no editor reports %.2f cores, %d bytes", cores, rss)
	}
}

// The editor metrics follow the processes a worker's simulators run in:
// a stand-in code-server (a process group with a busy process) and a
// stand-in Chromium (a process whose busy child says --type=renderer).
// Their CPU and memory show by group and class; the renderer's CPU stays
// counted once it has exited.
func TestEditorMetrics(t *testing.T) {
	editor := startBusyGroup(t)
	// The renderer's --type comes from the environment, so that only the
	// child's command line shows it; the child shows the browser's for a
	// second first, as a child does before its exec (a reading then must
	// not count it as the browser for good).
	browser := exec.Command("/bin/sh", "-c", `( sleep 1; exec /bin/bash -c "$BUSY" bash "$TYPE" ) & echo $! ; wait`)
	browser.Env = append(os.Environ(), "BUSY="+busyScript, "TYPE=--type=renderer")
	out, err := browser.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := browser.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = browser.Process.Kill(); _ = browser.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	renderer, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("renderer pid %q: %v", line, err)
	}
	defer func() { _ = syscall.Kill(renderer, syscall.SIGKILL) }()

	m := NewMetrics("w1")
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	if got := scrape(t, srv.URL); got[`dialogfarm_simulators{worker="w1"}`] != 0 {
		t.Errorf("simulators before any editor is watched: %v", got)
	}
	m.WatchEditors(func() ([]int, int) { return []int{editor.Process.Pid}, browser.Process.Pid }, 3)

	const (
		rendererCPU = `dialogfarm_editor_cpu_seconds_total{class="chromium-renderer",group="chromium",worker="w1"}`
		rendererRSS = `dialogfarm_editor_resident_memory_bytes{class="chromium-renderer",group="chromium",worker="w1"}`
		editorCPU   = `dialogfarm_editor_cpu_seconds_total{class="code-server-other",group="code-server",worker="w1"}`
		editorRSS   = `dialogfarm_editor_resident_memory_bytes{class="code-server-other",group="code-server",worker="w1"}`
		browserRSS  = `dialogfarm_editor_resident_memory_bytes{class="chromium-browser",group="chromium",worker="w1"}`
	)
	start := time.Now()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var got map[string]float64
	for deadline := start.Add(20 * time.Second); ; <-tick.C {
		got = scrape(t, srv.URL)
		if got[rendererCPU] >= 0.3 && got[editorCPU] >= 0.3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the busy processes' CPU never showed: %v", got)
		}
	}
	if wall := time.Since(start).Seconds() + 1; got[rendererCPU] > wall || got[editorCPU] > wall {
		t.Errorf("more CPU than wall time (%.1f s): %v", wall, got)
	}
	for _, s := range []string{rendererRSS, editorRSS, browserRSS} {
		if got[s] < 100<<10 {
			t.Errorf("%s = %v bytes", s, got[s])
		}
	}
	if got[`dialogfarm_simulators{worker="w1"}`] != 3 {
		t.Errorf("simulators %v, want 3", got[`dialogfarm_simulators{worker="w1"}`])
	}

	// The renderer exits: its memory goes, its CPU stays counted.
	before := scrape(t, srv.URL)[rendererCPU]
	if err := syscall.Kill(renderer, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; <-tick.C {
		got = scrape(t, srv.URL)
		if _, ok := got[rendererRSS]; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the renderer's memory is still counted after it was killed: %v", got)
		}
	}
	if got[rendererCPU] < before {
		t.Errorf("the renderer's CPU went down when it exited: %v -> %v", before, got[rendererCPU])
	}
}
