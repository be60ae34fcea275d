package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
	"dialogfarm/internal/procstat"
)

func TestMakeConfigsCoversTheWorkload(t *testing.T) {
	set, err := makeConfigs("../../examples/sample-repo")
	if err != nil {
		t.Fatal(err)
	}
	triggers := map[string]int{}
	var cursor, selection, slash, twoTurns int
	for _, c := range set.Measured {
		triggers[c.Trigger]++
		if c.Cursor != nil {
			cursor++
		}
		if c.Selection != nil {
			selection++
		}
		if c.Instruction == dialog.InstructionSlash {
			slash++
		}
		if len(c.Turns) == 2 {
			twoTurns++
		}
	}
	for _, tr := range dialog.Triggers {
		if triggers[tr] == 0 {
			t.Errorf("no measured config uses trigger %s", tr)
		}
	}
	if cursor == 0 || selection == 0 || slash == 0 || twoTurns != len(set.Measured) {
		t.Errorf("cursor %d, selection %d, slash %d, 2-turn %d of %d", cursor, selection, slash, twoTurns, len(set.Measured))
	}
	mix := map[string]bool{}
	for _, c := range set.throughputMix() {
		mix[c.Trigger] = true
	}
	if len(mix) != len(dialog.Triggers) {
		t.Errorf("throughput mix covers triggers %v, want all of %v", mix, dialog.Triggers)
	}
}

func TestSummarize(t *testing.T) {
	for name, tc := range map[string]struct {
		in   []float64
		want stats
	}{
		"empty": {nil, stats{}},
		"odd":   {[]float64{3, 1, 2}, stats{N: 3, Median: 2, Min: 1, Max: 3}},
		"even":  {[]float64{4, 1, 2, 3}, stats{N: 4, Median: 2.5, Min: 1, Max: 4}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := summarize(tc.in); got != tc.want {
				t.Errorf("summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestRSSSamplerSeesThisProcess(t *testing.T) {
	pid := os.Getpid()
	s := startRSS(context.Background(), func() ([]int, int) { return nil, pid }, 10*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) { // busy: the sampler must see CPU time
		if _, b := s.CPU(); b >= 0.05 {
			break
		}
	}
	cpuEditor, cpuBrowser := s.CPU()
	editor, browser := s.Stop()
	if editor != 0 || browser <= 0 {
		t.Errorf("peaks = %d, %d; want 0 and this process's RSS", editor, browser)
	}
	if pe, pb := s.PeakPSS(); pe != 0 || pb <= 0 {
		t.Errorf("PSS peaks = %d, %d; want 0 and this process's PSS", pe, pb)
	}
	if cpuEditor != 0 || cpuBrowser < 0.05 {
		t.Errorf("CPU = %.2f, %.2f s; want 0 and at least 0.05 s for this busy process", cpuEditor, cpuBrowser)
	}
}

func TestReportPrintsTargets(t *testing.T) {
	r := &report{Runs: 5, CPUs: 2, LoadSeen: stats{N: 1, Max: 9}, ModelDelay: 2, PerSession: 4,
		Latency:    []row{{Name: "ONE TURN", stats: stats{N: 4, Median: 0.3, Min: 0.1, Max: 0.9}}},
		Throughput: []level{{Sessions: 1, Rounds: 5, ConfigsPerRound: 4, PerMinute: stats{N: 5, Median: 8}, Ratio: 1}},
		Targets: []target{
			newTarget("overhead", 0.3, true, "<=", 0.5, " s"),
			newTarget("scaling", 1.9, true, ">=", 3.2, "x"),
			newTarget("unmeasured", 0, false, ">=", 3.2, "x"),
		}}
	var b strings.Builder
	if err := r.print(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`0\.30 s <= 0\.50 s\s+MET`, `1\.90x >= 3\.20x\s+NOT MET`, `unmeasured\s+- >= 3\.20x\s+NOT MEASURED`, `warning: the load average exceeded`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("report does not match %q:\n%s", want, out)
		}
	}
}

func TestBrowserFlag(t *testing.T) {
	o, err := parseFlags([]string{"-browser", "rod, chromedp"}, io.Discard)
	if err != nil || len(o.Browsers) != 2 || o.Browsers[0] != browser.BackendRod || o.Browsers[1] != browser.BackendChromedp {
		t.Fatalf("-browser rod,chromedp: %v, %v", o.Browsers, err)
	}
	if o, err := parseFlags(nil, io.Discard); err != nil || len(o.Browsers) != 1 || o.Browsers[0] != browser.BackendRod {
		t.Fatalf("default: %v, %v", o.Browsers, err)
	}
	for _, bad := range []string{"firefox", "rod,rod", ""} {
		if _, err := parseFlags([]string{"-browser", bad}, io.Discard); err == nil {
			t.Errorf("-browser %q accepted", bad)
		}
	}
	if o, err := parseFlags([]string{"-browser-js-flags", "--bytecode-old-age=2 --flush-baseline-code"}, io.Discard); err != nil || len(o.JSFlags) != 2 {
		t.Errorf("-browser-js-flags: %q, %v", o.JSFlags, err)
	}
	if _, err := parseFlags([]string{"-browser-js-flags", "bytecode-old-age=2"}, io.Discard); err == nil || !strings.Contains(err.Error(), "-browser-js-flags") {
		t.Errorf("-browser-js-flags without its dashes: %v", err)
	}
}

func TestSideBySide(t *testing.T) {
	rep := func(b browser.Backend, turn, perMin float64) *report {
		return &report{Backend: b, Latency: []row{{Name: "ONE TURN", stats: stats{N: 4, Median: turn}}},
			Throughput: []level{{Sessions: 1, PerMinute: stats{N: 3, Median: perMin}, Steady: cpuPerDialogue{Total: 1.25}}},
			Targets:    []target{newTarget("overhead", turn, true, "<=", 0.5, " s")}}
	}
	var b strings.Builder
	if err := printSideBySide(&b, []*report{rep(browser.BackendRod, 0.31, 8.5), rep(browser.BackendChromedp, 0.62, 7.25)}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`measure\s+rod\s+chromedp`, `ONE TURN \(s\)\s+0\.31\s+0\.62`, `1 sims: dialogues/min, whole run\s+8\.5\s+7\.2`,
		`1 sims: CPU s per dialogue, steady\s+1\.25\s+1\.25`, `target: overhead\s+0\.31 s met\s+0\.62 s not met`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("comparison does not match %q:\n%s", want, out)
		}
	}
}

// A renderer is forked from Chromium's zygote and shows the zygote's
// command line until it sets its own: a process first seen so is counted
// in the class it takes on.
func TestSamplerReclassifiesForkedRenderer(t *testing.T) {
	py := "/usr/bin/python3" // not a shim that runs it as a child
	if _, err := os.Stat(py); err != nil {
		t.Skip("no python3 to stand in for a forked renderer")
	}
	ready := filepath.Join(t.TempDir(), "renderer")
	// Shown as a zygote until the marker file exists, then as a renderer
	// (exec keeps the pid), busy so that CPU time is counted.
	// The code names no type itself: the classes come from the arguments.
	code := `import os, sys, time
if sys.argv[1] != '--type=' + sys.argv[4]:
    while not os.path.exists(sys.argv[2]): time.sleep(0.01)
    os.execv(sys.executable, [sys.executable, '-c', sys.argv[3], '--type=' + sys.argv[4], sys.argv[2], sys.argv[3], sys.argv[4]])
end = time.time() + 30
while time.time() < end: pass`
	cmd := exec.Command(py, "-c", code, "--type=zygote", ready, code, "renderer")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	s := startRSS(context.Background(), func() ([]int, int) { return nil, pid }, 10*time.Millisecond)
	defer s.Stop()
	deadline := time.Now().Add(10 * time.Second)
	// Each look samples /proc; a look every 5 ms leaves the CPU to the
	// process being watched on a loaded 2-core machine.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if _, ok := s.CPUByClass()[procstat.ChromiumForked.Title()]; ok {
			break
		}
		<-tick.C
	}
	if _, ok := s.CPUByClass()[procstat.ChromiumForked.Title()]; !ok {
		t.Fatalf("the process was never seen as a zygote: %v", s.CPUByClass())
	}
	if err := os.WriteFile(ready, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for time.Now().Before(deadline) {
		byClass := s.CPUByClass()
		if byClass["Chromium renderers"] >= 0.05 {
			if _, ok := byClass[procstat.ChromiumForked.Title()]; ok {
				t.Errorf("counted in both classes: %v", byClass)
			}
			return
		}
		<-tick.C
	}
	t.Errorf("the process's CPU never moved to Chromium renderers: %v", s.CPUByClass())
}

// TestModelDelayBounds: every -model-delay the flag accepts leaves the
// pool member time to wait for the answer (a fixed 1-minute member
// timeout gave up on every call of a 60 s model and retried for ever),
// and a delay the driver's answer timeout cannot wait for is refused.
func TestModelDelayBounds(t *testing.T) {
	for _, d := range []string{"0s", "2s", "60s", "90s", "150s"} {
		o, err := parseFlags([]string{"-model-delay", d}, io.Discard)
		if err != nil {
			t.Fatalf("-model-delay %s: %v", d, err)
		}
		if got := memberTimeout(o.ModelDelay); got < o.ModelDelay+30*time.Second {
			t.Errorf("-model-delay %s: member timeout %v leaves the answer no room", d, got)
		}
	}
	for _, d := range []string{"-1s", "151s", "10m"} {
		if _, err := parseFlags([]string{"-model-delay", d}, io.Discard); err == nil || !strings.Contains(err.Error(), "-model-delay") {
			t.Errorf("-model-delay %s: err %v, want it refused", d, err)
		}
	}
}

// writeTree writes files (path: text) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCopyRepoLeavesOutGitAndNodeModules: a repository given with -repo is
// copied without its .git and node_modules folders, and configs are made on
// the copy.
func TestCopyRepoLeavesOutGitAndNodeModules(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"a/one.py":                "def one(x):\n    return x + 1\n",
		"b/two.go":                "package b\n\nfunc Two(x int) int {\n\treturn x * 2\n}\n",
		".git/config":             "[core]\n",
		"web/node_modules/m/m.js": "function m(x) {\n  return x;\n}\n",
		"web/node_modules/.bin/m": "#!/bin/sh\n",
		"web/.cache/three.ts":     "function three(x) {\n  return x;\n}\n",
		"web/four.js":             "function four(x) {\n  return x;\n}\n",
	}
	writeTree(t, src, files)
	dst := filepath.Join(t.TempDir(), "repo")
	if err := copyRepo(src, dst); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := filepath.WalkDir(dst, func(path string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dst, path)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/one.py", "b/two.go", "web/four.js"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("copied %q, want %q", got, want)
	}
	set, err := makeConfigs(dst)
	if err != nil {
		t.Fatal(err)
	}
	if n := lineCount(filepath.Join(dst, "b/two.go")); n != 5 {
		t.Errorf("lineCount(b/two.go) = %d, want 5", n)
	}
	for _, c := range set.Measured {
		if !strings.HasPrefix(c.Repo, dst) || c.File == "" {
			t.Errorf("config %s on %s %s, want a file of the copy", c.ID, c.Repo, c.File)
		}
	}
	if err := copyRepo(filepath.Join(src, "missing"), t.TempDir()); err == nil {
		t.Error("copying a missing repository: no error")
	}
}

// TestRepoMix: with -repos 3 the throughput mix is the mixes of 3 copies
// of the repository, config by config in turn, each config on its copy.
func TestRepoMix(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"a/one.py": "def one(x):\n    return x + 1\n",
		"b/two.go": "package b\n\nfunc Two(x int) int {\n\treturn x * 2\n}\n",
	})
	repo := filepath.Join(t.TempDir(), "repo")
	if err := copyRepo(src, repo); err != nil {
		t.Fatal(err)
	}
	set, err := makeConfigs(repo)
	if err != nil {
		t.Fatal(err)
	}
	mix, err := repoMix(set, repo, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(mix) != 3*len(set.throughputMix()) {
		t.Fatalf("%d configs in the mix of 3 copies, want %d", len(mix), 3*len(set.throughputMix()))
	}
	for i, c := range mix {
		want := repo
		if k := i % 3; k > 0 {
			want = fmt.Sprintf("%s-%d", repo, k+1)
		}
		if c.Repo != want {
			t.Errorf("config %d (%s) on %s, want %s", i, c.ID, c.Repo, want)
		}
		if _, err := os.Stat(filepath.Join(c.Repo, c.File)); err != nil {
			t.Errorf("config %d: %v", i, err)
		}
	}
	if one, err := repoMix(set, repo, 1); err != nil || len(one) != len(set.throughputMix()) {
		t.Errorf("-repos 1: %d configs (%v), want the mix of the repository alone", len(one), err)
	}
}

// TestSamplerReclassifiesForkedExtensionHost: a process of code-server's
// group first seen with a command line that names no role (as one forked
// from the main process, or exec'ing, shows) is counted, whole, under the
// role it shows later (at 1 simulator the extension host was counted as
// "code-server other" for good).
func TestSamplerReclassifiesForkedExtensionHost(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no python3 to stand in for an extension host")
	}
	ready := filepath.Join(t.TempDir(), "host")
	// The role is given in two halves, so that only the exec'd command
	// line names it whole.
	code := `import os, sys, time
role = sys.argv[4] + sys.argv[5]
if sys.argv[1] != '--type=' + role:
    while not os.path.exists(sys.argv[2]): time.sleep(0.01)
    os.execv(sys.executable, [sys.executable, '-c', sys.argv[3], '--type=' + role, sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]])
end = time.time() + 30
while time.time() < end: pass`
	cmd := exec.Command(py, "-c", code, "--type=forked", ready, code, "extension", "Host")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	s := startRSS(context.Background(), func() ([]int, int) { return []int{pid}, 0 }, 10*time.Millisecond)
	defer s.Stop()
	other, host := procstat.CodeServerOther.Title(), procstat.ExtensionHost.Title()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if _, ok := s.CPUByClass()[other]; ok {
			break
		}
		<-tick.C
	}
	if _, ok := s.CPUByClass()[other]; !ok {
		t.Fatalf("the process was never seen as code-server other: %v", s.CPUByClass())
	}
	if err := os.WriteFile(ready, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for time.Now().Before(deadline) {
		byClass := s.CPUByClass()
		if byClass[host] >= 0.05 {
			if _, ok := byClass[other]; ok {
				t.Errorf("counted in both classes: %v", byClass)
			}
			return
		}
		<-tick.C
	}
	t.Errorf("the process's CPU never moved to the extension host: %v", s.CPUByClass())
}
