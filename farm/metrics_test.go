package farm

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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

// The editor metrics follow the processes a worker's simulators run in:
// a stand-in code-server (a process group with a busy process) and a
// stand-in Chromium (a process whose busy child says --type=renderer).
// Their CPU and memory show by group and class; the renderer's CPU stays
// counted once it has exited.
func TestEditorMetrics(t *testing.T) {
	// Busy for 30 s at most, without forking (bash counts SECONDS).
	busy := "while [ $SECONDS -lt 30 ]; do :; done"
	editor := exec.Command("/bin/bash", "-c", busy)
	editor.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The renderer's --type comes from the environment, so that only the
	// child's command line shows it.
	browser := exec.Command("/bin/sh", "-c", `/bin/bash -c "$BUSY" bash "$TYPE" & echo $! ; wait`)
	browser.Env = append(os.Environ(), "BUSY="+busy, "TYPE=--type=renderer")
	out, err := browser.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*exec.Cmd{editor, browser} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	}
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
	m.WatchEditors(func() (int, int) { return editor.Process.Pid, browser.Process.Pid }, 3)

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
