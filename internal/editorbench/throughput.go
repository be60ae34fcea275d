package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"dialogfarm/dialog"
	"dialogfarm/driver"
)

// throughputPhase is what the throughput measurement found.
type throughputPhase struct {
	levels         []level
	windows        int
	idleEditor     float64 // CPU cores with every window warm and idle
	idleBrowser    float64
	idleByClass    map[string]float64 // the same per kind of process
	peakEditorMiB  float64
	peakBrowserMiB float64
	peakPSSMiB     float64 // code-server + Chromium
	failures       []string
}

// levelAcc gathers one level's rounds.
type levelAcc struct {
	lv                                             level
	perMin, clean, turn, model, overhead, dialogue []float64
	wall                                           time.Duration
	cpuEditor, cpuBrowser                          float64
	classes                                        map[string]float64
}

// throughput measures every level on one code-server and Chromium with as
// many windows as the largest level, all warmed first (each drives one
// untimed warm-up config: its load and first chat open). Level n drives on
// the first n windows while the rest idle. The levels' rounds interleave:
// round r runs every level once, in an order rotated by r, so a load that
// other processes put on the machine meanwhile falls on all levels alike.
func (b *bench) throughput(ctx context.Context) (ph throughputPhase, err error) {
	ph.windows = slices.Max(b.opts.Sessions)
	out := filepath.Join(b.work, string(b.backend), "throughput")
	g, err := b.startRig(ctx, out, ph.windows, b.slow)
	if err != nil {
		return ph, fmt.Errorf("throughput: %w", err)
	}
	defer g.close(ctx)
	rss := startRSS(ctx, g.runner.PIDs, 200*time.Millisecond)
	defer func() { // ph is the named result: the peaks reach the caller
		e, br := rss.Stop()
		ph.peakEditorMiB, ph.peakBrowserMiB = float64(e)/(1<<20), float64(br)/(1<<20)
		pe, pb := rss.PeakPSS()
		ph.peakPSSMiB = float64(pe+pb) / (1 << 20)
	}()
	records, err := driver.OpenRecordLog(out)
	if err != nil {
		return ph, err
	}
	defer records.Close()

	sessions := make([]*driver.Session, ph.windows)
	for i := range sessions {
		if sessions[i], err = g.runner.NewSession(ctx, fmt.Sprintf("s%d", i+1)); err != nil {
			return ph, fmt.Errorf("throughput: open window %d: %w", i+1, err)
		}
	}
	warm, err := b.warmUp(ctx, sessions)
	if err != nil {
		return ph, fmt.Errorf("throughput: warm up: %w", err)
	}
	accs := make([]levelAcc, len(b.opts.Sessions))
	for i, n := range b.opts.Sessions {
		accs[i].lv = level{Sessions: n, Rounds: b.opts.Runs, DialoguesPerRound: n * b.opts.PerSession}
	}
	warmOK := 0
	for _, d := range warm {
		if err := records.Append(d); err != nil {
			return ph, err
		}
		if d.Status == dialog.StatusOK {
			warmOK++
			continue
		}
		ph.failures = append(ph.failures, describeFailure("throughput warm-up", d))
		for i := range accs {
			accs[i].lv.WarmFailed++
		}
	}
	if warmOK < ph.windows {
		for i := range accs {
			accs[i].lv.ColdWindows = ph.windows - warmOK
		}
	}
	if ph.idleEditor, ph.idleBrowser, ph.idleByClass, err = idleCPU(ctx, rss, idleWindow); err != nil {
		return ph, fmt.Errorf("throughput: measure idle CPU: %w", err)
	}
	b.progress("throughput: %d/%d windows warm, idle they use %.2f + %.2f cores; %d rounds, each running levels %v once",
		warmOK, ph.windows, ph.idleEditor, ph.idleBrowser, b.opts.Runs, b.opts.Sessions)

	for r := 1; r <= b.opts.Runs; r++ {
		for k := range accs {
			a := &accs[(k+r-1)%len(accs)]
			n := a.lv.Sessions
			cfgs := cycle(b.set.throughputMix(), a.lv.DialoguesPerRound, fmt.Sprintf("n%d-r%d", n, r))
			e0, b0 := rss.CPU()
			c0 := rss.CPUByClass()
			ds, took, err := driveRound(ctx, sessions[:n], cfgs)
			if err != nil {
				return ph, fmt.Errorf("throughput with %d simulators, round %d: %w", n, r, err)
			}
			e1, b1 := rss.CPU()
			a.cpuEditor, a.cpuBrowser, a.wall = a.cpuEditor+e1-e0, a.cpuBrowser+b1-b0, a.wall+took
			if a.classes == nil {
				a.classes = map[string]float64{}
			}
			for k, v := range rss.CPUByClass() {
				a.classes[k] += v - c0[k]
			}
			for _, d := range ds {
				if err := records.Append(d); err != nil {
					return ph, err
				}
				if d.Status != dialog.StatusOK {
					ph.failures = append(ph.failures, describeFailure(fmt.Sprintf("throughput %d sims round %d", n, r), d))
				}
			}
			a.addRound(ds, took)
			b.progress("throughput round %d, %d sims: %d/%d ok in %.1f s = %.1f dialogues/min, load %s",
				r, n, countOK(ds), len(ds), took.Seconds(), a.perMin[len(a.perMin)-1], loadAverage())
		}
	}
	for _, a := range accs {
		ph.levels = append(ph.levels, a.level())
	}
	return ph, nil
}

// idleWindow is how long the warm, idle windows are watched for their CPU
// use: what an idle window costs the levels that leave it idle.
const idleWindow = 10 * time.Second

// idleCPU returns the CPU cores code-server and Chromium use over d while
// nothing is driven, also per kind of process.
func idleCPU(ctx context.Context, rss *rssSampler, d time.Duration) (editor, browser float64, byClass map[string]float64, err error) {
	e0, b0 := rss.CPU()
	c0 := rss.CPUByClass()
	start := time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return 0, 0, nil, ctx.Err()
	case <-t.C:
	}
	e1, b1 := rss.CPU()
	secs := time.Since(start).Seconds()
	byClass = map[string]float64{}
	for k, v := range rss.CPUByClass() {
		byClass[k] = (v - c0[k]) / secs
	}
	return (e1 - e0) / secs, (b1 - b0) / secs, byClass, nil
}

// addRound takes one round's dialogues and wall time.
func (a *levelAcc) addRound(ds []dialog.Dialogue, took time.Duration) {
	ok := 0
	for _, d := range ds {
		if d.Status != dialog.StatusOK {
			a.lv.Failed++
			continue
		}
		ok++
		a.dialogue = append(a.dialogue, d.Seconds)
		for _, t := range turnsOf(d) {
			a.turn, a.model = append(a.turn, t.total()), append(a.model, t.model)
			a.overhead = append(a.overhead, t.total()-t.model)
		}
	}
	a.lv.OK += ok
	a.perMin = append(a.perMin, float64(ok)/took.Minutes())
	if ok == len(ds) {
		a.clean = append(a.clean, a.perMin[len(a.perMin)-1])
	}
}

func (a *levelAcc) level() level {
	lv := a.lv
	lv.PerMinute, lv.CleanPerMinute = summarize(a.perMin), summarize(a.clean)
	lv.TurnSeconds, lv.ModelSeconds = summarize(a.turn), summarize(a.model)
	lv.TurnOverhead, lv.DialogueSeconds = summarize(a.overhead), summarize(a.dialogue)
	if w := a.wall.Seconds(); w > 0 {
		lv.CPUEditor, lv.CPUBrowser = a.cpuEditor/w, a.cpuBrowser/w
	}
	if lv.OK > 0 {
		lv.CPUPerDialogue = (a.cpuEditor + a.cpuBrowser) / float64(lv.OK)
		lv.CPUByClass = map[string]float64{}
		for k, v := range a.classes {
			lv.CPUByClass[k] = v / float64(lv.OK)
		}
	}
	return lv
}

// warmUpAttempts bounds the warm-up tries per window: a window that failed
// to load would otherwise load inside the timed rounds.
const warmUpAttempts = 3

// warmUp drives the warm-up config in every window, all at once (the driver
// lets one window load at a time), again in a window where it failed, and
// returns every attempt.
func (b *bench) warmUp(ctx context.Context, sessions []*driver.Session) ([]dialog.Dialogue, error) {
	var (
		mu  sync.Mutex
		out []dialog.Dialogue
	)
	eg, ectx := errgroup.WithContext(ctx)
	for _, s := range sessions {
		eg.Go(func() error {
			for a := 1; a <= warmUpAttempts && ectx.Err() == nil; a++ {
				c := b.set.Warm
				c.ID = fmt.Sprintf("%s-%s-%d", c.ID, s.ID, a)
				d, _ := s.Drive(ectx, c) // a failure is in the record
				mu.Lock()
				out = append(out, d)
				mu.Unlock()
				if d.Status == dialog.StatusOK {
					break
				}
			}
			return ectx.Err()
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// driveRound drives cfgs from one queue on all sessions at once and returns
// the dialogues and the time from the first dispatch to the last finish.
func driveRound(ctx context.Context, sessions []*driver.Session, cfgs []dialog.ChatConfig) ([]dialog.Dialogue, time.Duration, error) {
	jobs := make(chan dialog.ChatConfig, len(cfgs))
	for _, c := range cfgs {
		jobs <- c
	}
	close(jobs)
	var (
		mu  sync.Mutex
		out []dialog.Dialogue
	)
	eg, ectx := errgroup.WithContext(ctx)
	start := time.Now()
	for _, s := range sessions {
		eg.Go(func() error {
			for c := range jobs {
				if err := ectx.Err(); err != nil {
					return err
				}
				d, _ := s.Drive(ectx, c) // a failure is in the record
				mu.Lock()
				out = append(out, d)
				mu.Unlock()
			}
			return nil
		})
	}
	err := eg.Wait()
	took := time.Since(start)
	if err == nil {
		err = ctx.Err()
	}
	return out, took, err
}
