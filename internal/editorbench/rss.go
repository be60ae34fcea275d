package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rssSampler records the peak resident memory of code-server's process
// group and of Chromium's process tree, summing VmRSS over their processes
// (shared pages are counted once per process, as top would), and the CPU
// time they use.
type rssSampler struct {
	stop chan struct{}
	done chan struct{}
	pids func() (editor, browser int)

	mu              sync.Mutex
	editor, browser int64 // peak bytes
	// pssEditor and pssBrowser are peak proportional set sizes in bytes
	// (a page shared by n processes counts 1/n in each): what the
	// processes cost the machine, without RSS's counting of Chromium's
	// and Node's shared pages once per process. Read every pssPeriod
	// (reading smaps_rollup walks the page tables: read every second, it
	// was half of this process's CPU in a 1-simulator run).
	pssEditor, pssBrowser int64
	samples               int
	pssEvery              int // samples apart PSS is read
	cpu                   map[int]*cpuSpan
	// fromBirth counts a process's CPU from its start, not from when
	// sampling first saw it: for a sampler started before the editor and
	// browser, so their start-up is counted.
	fromBirth bool
	// self is this process's CPU ticks when sampling began; history the
	// cumulative CPU seconds at every sample, for the CPU between two
	// moments (cpuBetween).
	self    int64
	history []cpuSnapshot
}

// cpuSnapshot is the CPU seconds used since sampling began, as of one
// sample: by process class, code-server's group, Chromium's tree and this
// process (the driver, capture endpoint, embedded queue and fake model).
type cpuSnapshot struct {
	at                    time.Time
	editor, browser, self float64
	classes               map[string]float64
}

// cpuSpan is a process's CPU ticks when sampling first and last saw it.
type cpuSpan struct {
	browser     bool
	class       string
	first, last int64
}

// classForked is the class of Chromium's zygotes and utility processes,
// and of a renderer sampled before it has replaced the zygote's command
// line with its own: the sampler asks again for processes of this class.
const classForked = "Chromium utility and zygote"

// processClass names what a process of the editor or browser is, from its
// command line, for the per-process CPU breakdown.
func processClass(pid int, browser bool) string {
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	c := string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	if browser {
		switch {
		case c == "":
			// Between fork and exec, or exiting, a process shows no
			// command line (CI caught the sampler there and counted a
			// renderer as the browser process for good): ask again.
			return classForked
		case strings.Contains(c, "--type=renderer"):
			return "Chromium renderers"
		case strings.Contains(c, "--type=gpu-process"):
			return "Chromium GPU process"
		case strings.Contains(c, "--type="):
			return classForked
		}
		return "Chromium browser process"
	}
	switch {
	case strings.Contains(c, "tsserver"), strings.Contains(c, "typingsInstaller"):
		return "TypeScript server"
	case strings.Contains(c, "extensionHost"), strings.Contains(c, "--type=extensionHost"):
		return "extension host"
	case strings.Contains(c, "watcher"), strings.Contains(c, "fileWatcher"):
		return "file watcher"
	case strings.Contains(c, "jsonServerMain"), strings.Contains(c, "LanguageServer"), strings.Contains(c, "ServerMain"):
		return "language servers (JSON, CSS, HTML, ...)"
	case strings.Contains(c, "out/node/entry"), strings.Contains(c, "code-server.sh"):
		return "code-server main"
	}
	return "code-server other"
}

// CPUByClass samples once more and returns the CPU seconds used since
// sampling began, by process class.
func (s *rssSampler) CPUByClass() map[string]float64 {
	s.sample(s.pids())
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]float64{}
	for _, c := range s.cpu {
		out[c.class] += float64(c.last-c.first) / clockTicks
	}
	return out
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/*/stat; it
// is 100 on Linux builds that matter here.
const clockTicks = 100

// startRSS samples every interval until Stop; pids returns code-server's
// pid (its process group id) and Chromium's main pid at each sample, so a
// restarted editor is followed.
func startRSS(ctx context.Context, pids func() (editor, browser int), every time.Duration) *rssSampler {
	return startSampler(ctx, pids, every, false)
}

// startSampler is startRSS; with fromBirth a process's CPU counts from
// its start (for processes started after the sampler).
func startSampler(ctx context.Context, pids func() (editor, browser int), every time.Duration, fromBirth bool) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{}), pids: pids, cpu: map[int]*cpuSpan{}, fromBirth: fromBirth,
		self: selfTicks(), pssEvery: max(1, int(pssPeriod/every))}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.sample(pids())
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends sampling, waits for the sampling goroutine and returns the
// peaks in bytes.
func (s *rssSampler) Stop() (editor, browser int64) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.editor, s.browser
}

// pssPeriod is how often PSS is read. A window's memory grows over its
// dialogues, so a peak read every 5 s lags the true one by little.
const pssPeriod = 5 * time.Second

// PeakPSS returns the peak proportional set sizes in bytes seen so far.
func (s *rssSampler) PeakPSS() (editor, browser int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pssEditor, s.pssBrowser
}

// CPU samples once more and returns the CPU seconds code-server's group and
// Chromium's tree used since sampling began (a process that exits between
// samples loses its last interval).
func (s *rssSampler) CPU() (editor, browser float64) {
	s.sample(s.pids())
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.cpu {
		if c.browser {
			browser += float64(c.last-c.first) / clockTicks
		} else {
			editor += float64(c.last-c.first) / clockTicks
		}
	}
	return editor, browser
}

func (s *rssSampler) sample(editorPID, browserPID int) {
	procs := readProcs()
	var e, b int64
	var editorPIDs, browserPIDs []int
	if editorPID > 0 {
		for pid, p := range procs {
			if p.pgrp == editorPID {
				e += p.rss
				editorPIDs = append(editorPIDs, pid)
			}
		}
	}
	if browserPID > 0 {
		browserPIDs = tree(procs, browserPID)
		for _, pid := range browserPIDs {
			b += procs[pid].rss
		}
	}
	var pe, pb int64
	s.mu.Lock()
	n := s.samples
	s.samples++
	s.mu.Unlock()
	if n%s.pssEvery == 0 {
		for _, pid := range editorPIDs {
			pe += pss(pid)
		}
		for _, pid := range browserPIDs {
			pb += pss(pid)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.editor, s.browser = max(s.editor, e), max(s.browser, b)
	s.pssEditor, s.pssBrowser = max(s.pssEditor, pe), max(s.pssBrowser, pb)
	for i, group := range [][]int{editorPIDs, browserPIDs} {
		for _, pid := range group {
			c, ok := s.cpu[pid]
			if !ok {
				c = &cpuSpan{browser: i == 1, class: processClass(pid, i == 1), first: procs[pid].ticks}
				if s.fromBirth {
					c.first = 0
				}
				s.cpu[pid] = c
			} else if c.class == classForked {
				// A renderer is forked from the zygote and shows
				// the zygote's command line until it sets its own.
				c.class = processClass(pid, i == 1)
			}
			c.last = max(c.last, procs[pid].ticks)
		}
	}
	snap := cpuSnapshot{at: time.Now(), self: float64(selfTicks()-s.self) / clockTicks, classes: map[string]float64{}}
	for _, c := range s.cpu {
		v := float64(c.last-c.first) / clockTicks
		snap.classes[c.class] += v
		if c.browser {
			snap.browser += v
		} else {
			snap.editor += v
		}
	}
	s.history = append(s.history, snap)
}

// cpuBetween is the CPU seconds used from t0 to t1, from the last sample
// at or before t0 (the first one if none) to the first at or after t1 (the
// last one if none).
func (s *rssSampler) cpuBetween(t0, t1 time.Time) cpuSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.history) == 0 {
		return cpuSnapshot{classes: map[string]float64{}}
	}
	a, b := s.history[0], s.history[len(s.history)-1]
	for _, h := range s.history {
		if !h.at.After(t0) {
			a = h
		}
	}
	for i := len(s.history) - 1; i >= 0; i-- {
		if !s.history[i].at.Before(t1) {
			b = s.history[i]
		}
	}
	return b.minus(a)
}

// minus is the CPU used between snapshot a and s.
func (s cpuSnapshot) minus(a cpuSnapshot) cpuSnapshot {
	d := cpuSnapshot{at: s.at, editor: s.editor - a.editor, browser: s.browser - a.browser, self: s.self - a.self, classes: map[string]float64{}}
	for k, v := range s.classes {
		d.classes[k] = max(v-a.classes[k], 0) // float sums in map order may differ in the last bits
	}
	return d
}

// selfTicks is this process's CPU ticks (utime + stime).
func selfTicks() int64 {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	p, _ := parseStat(data)
	return p.ticks
}

// procInfo is what /proc/<pid>/stat says about a process: its parent, its
// process group, its CPU time (utime + stime) in clock ticks and its
// resident set in bytes (the same count as status's VmRSS, without a
// second file read per process and sample).
type procInfo struct {
	ppid, pgrp int
	ticks      int64
	rss        int64
}

// readProcs reads the stat line (parent, process group, CPU, RSS) of every
// process in /proc; processes that exit while being read are left out.
func readProcs() map[int]procInfo {
	out := map[int]procInfo{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if p, ok := parseStat(data); ok {
			out[pid] = p
		}
	}
	return out
}

// parseStat reads a /proc/<pid>/stat line.
func parseStat(data []byte) (procInfo, bool) {
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 > len(data) {
		return procInfo{}, false
	}
	// f[0] is field 3 (state): ppid is field 4, pgrp 5, utime 14, stime
	// 15, rss (pages) 24.
	f := strings.Fields(string(data[i+2:]))
	if len(f) < 22 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	utime, err3 := strconv.ParseInt(f[11], 10, 64)
	stime, err4 := strconv.ParseInt(f[12], 10, 64)
	rss, err5 := strconv.ParseInt(f[21], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
		return procInfo{}, false
	}
	return procInfo{ppid: ppid, pgrp: pgrp, ticks: utime + stime, rss: rss * int64(os.Getpagesize())}, true
}

// tree returns root and all its descendants.
func tree(procs map[int]procInfo, root int) []int {
	children := map[int][]int{}
	for pid, p := range procs {
		children[p.ppid] = append(children[p.ppid], pid)
	}
	if _, ok := procs[root]; !ok {
		return nil
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// pss is the process's proportional set size in bytes, 0 if it is gone.
func pss(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
