package main

import (
	"context"
	"sync"
	"time"

	"dialogfarm/internal/procstat"
)

// rssSampler records the peak resident memory of the code-servers'
// process groups and of Chromium's process tree, summing VmRSS over their processes
// (shared pages are counted once per process, as top would), and the CPU
// time they use.
type rssSampler struct {
	stop chan struct{}
	done chan struct{}
	pids func() (editors []int, browser int)

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
	class       procstat.Class
	first, last int64
}

// CPUByClass samples once more and returns the CPU seconds used since
// sampling began, by process class.
func (s *rssSampler) CPUByClass() map[string]float64 {
	s.sample(s.pids())
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]float64{}
	for _, c := range s.cpu {
		out[c.class.Title()] += float64(c.last-c.first) / procstat.ClockTicks
	}
	return out
}

// startRSS samples every interval until Stop; pids returns every
// code-server's pid (its process group id: one the simulators share, or
// one each) and Chromium's main pid at each sample, so a restarted editor
// is followed.
func startRSS(ctx context.Context, pids func() (editors []int, browser int), every time.Duration) *rssSampler {
	return startSampler(ctx, pids, every, false)
}

// startSampler is startRSS; with fromBirth a process's CPU counts from
// its start (for processes started after the sampler).
func startSampler(ctx context.Context, pids func() (editors []int, browser int), every time.Duration, fromBirth bool) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{}), pids: pids, cpu: map[int]*cpuSpan{}, fromBirth: fromBirth,
		self: procstat.SelfTicks(), pssEvery: max(1, int(pssPeriod/every))}
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
			browser += float64(c.last-c.first) / procstat.ClockTicks
		} else {
			editor += float64(c.last-c.first) / procstat.ClockTicks
		}
	}
	return editor, browser
}

func (s *rssSampler) sample(editorGroups []int, browserPID int) {
	procs := procstat.Read()
	var e, b int64
	var editorPIDs, browserPIDs []int
	for _, pgid := range editorGroups {
		if pgid > 0 {
			editorPIDs = append(editorPIDs, procstat.Group(procs, pgid)...)
		}
	}
	for _, pid := range editorPIDs {
		e += procs[pid].RSS
	}
	if browserPID > 0 {
		browserPIDs = procstat.Tree(procs, browserPID)
		for _, pid := range browserPIDs {
			b += procs[pid].RSS
		}
	}
	var pe, pb int64
	s.mu.Lock()
	n := s.samples
	s.samples++
	s.mu.Unlock()
	if n%s.pssEvery == 0 {
		for _, pid := range editorPIDs {
			pe += procstat.PSS(pid)
		}
		for _, pid := range browserPIDs {
			pb += procstat.PSS(pid)
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
				c = &cpuSpan{browser: i == 1, class: procstat.ClassOf(pid, i == 1), first: procs[pid].Ticks}
				if s.fromBirth {
					c.first = 0
				}
				s.cpu[pid] = c
			} else if !procstat.Final(c.class, pid, procs[pid], browserPID) {
				// A renderer is forked from the zygote and shows
				// the zygote's command line until it sets its own;
				// code-server's extension hosts and watchers are
				// forked from its main process and show its command
				// line, or none while they exec, until they run.
				// One that exits shows none: code-server's main
				// processes keep their class.
				if now := procstat.ClassOf(pid, i == 1); now != procstat.CodeServerOther || c.class != procstat.CodeServerMain {
					c.class = now
				}
			}
			c.last = max(c.last, procs[pid].Ticks)
		}
	}
	snap := cpuSnapshot{at: time.Now(), self: float64(procstat.SelfTicks()-s.self) / procstat.ClockTicks, classes: map[string]float64{}}
	for _, c := range s.cpu {
		v := float64(c.last-c.first) / procstat.ClockTicks
		snap.classes[c.class.Title()] += v
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
