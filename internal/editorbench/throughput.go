package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"dialogfarm/dialog"
	"dialogfarm/driver"
)

// throughputLevel measures n simulators on one code-server with the slow
// fake model. Every window first drives one untimed warm-up config (its
// load and first chat open); then opts.Runs timed rounds follow on the warm
// windows, each round driving n*opts.PerSession configs from one queue.
func (b *bench) throughputLevel(ctx context.Context, n int) (level, []string, error) {
	lv := level{Sessions: n, Rounds: b.opts.Runs, DialoguesPerRound: n * b.opts.PerSession}
	var failures []string
	out := filepath.Join(b.work, fmt.Sprintf("throughput-%d", n))
	g, err := b.startRig(ctx, out, n, b.slow)
	if err != nil {
		return lv, nil, fmt.Errorf("throughput with %d simulators: %w", n, err)
	}
	defer g.close(ctx)
	rss := startRSS(ctx, g.runner.PIDs, 200*time.Millisecond)
	peaksTaken := false
	takePeaks := func() {
		if !peaksTaken {
			e, br := rss.Stop()
			lv.PeakEditorMiB, lv.PeakBrowserMiB = float64(e)/(1<<20), float64(br)/(1<<20)
			peaksTaken = true
		}
	}
	defer takePeaks()

	sessions := make([]*driver.Session, n)
	for i := range n {
		if sessions[i], err = g.runner.NewSession(fmt.Sprintf("s%d", i+1)); err != nil {
			return lv, nil, fmt.Errorf("throughput with %d simulators: open window %d: %w", n, i+1, err)
		}
	}
	warm, err := b.warmUp(ctx, sessions)
	if err != nil {
		return lv, nil, fmt.Errorf("throughput with %d simulators: warm up: %w", n, err)
	}
	warmOK := 0
	for _, d := range warm {
		if d.Status != dialog.StatusOK {
			lv.WarmFailed++
			failures = append(failures, describeFailure(fmt.Sprintf("throughput %d sims warm-up", n), d))
		} else {
			warmOK++
		}
	}
	if warmOK < n {
		lv.ColdWindows = n - warmOK
		b.progress("throughput %d sims: %d windows still not warm after %d tries; they load inside round 1", n, n-warmOK, warmUpAttempts)
	}
	b.progress("throughput %d sims: %d/%d windows warm, %d rounds of %d dialogues", n, warmOK, n, lv.Rounds, lv.DialoguesPerRound)

	records, err := driver.OpenRecordLog(out)
	if err != nil {
		return lv, failures, err
	}
	defer records.Close()
	for _, d := range warm {
		if err := records.Append(d); err != nil {
			return lv, failures, err
		}
	}
	var perMin, clean, turn, model, overhead, dialogue []float64
	var wall time.Duration
	cpuEditor0, cpuBrowser0 := rss.CPU()
	for r := 1; r <= b.opts.Runs; r++ {
		cfgs := cycle(b.set.throughputMix(), lv.DialoguesPerRound, fmt.Sprintf("n%d-r%d", n, r))
		ds, took, err := driveRound(ctx, sessions, cfgs)
		if err != nil {
			return lv, failures, fmt.Errorf("throughput with %d simulators, round %d: %w", n, r, err)
		}
		ok := 0
		for _, d := range ds {
			if err := records.Append(d); err != nil {
				return lv, failures, err
			}
			if d.Status != dialog.StatusOK {
				lv.Failed++
				failures = append(failures, describeFailure(fmt.Sprintf("throughput %d sims round %d", n, r), d))
				continue
			}
			ok++
			dialogue = append(dialogue, d.Seconds)
			for _, t := range turnsOf(d) {
				turn, model = append(turn, t.total()), append(model, t.model)
				overhead = append(overhead, t.total()-t.model)
			}
		}
		lv.OK += ok
		wall += took
		perMin = append(perMin, float64(ok)/took.Minutes())
		if ok == len(ds) {
			clean = append(clean, perMin[len(perMin)-1])
		}
		b.progress("throughput %d sims round %d: %d ok in %.1f s = %.1f dialogues/min",
			n, r, ok, took.Seconds(), perMin[len(perMin)-1])
	}
	cpuEditor, cpuBrowser := rss.CPU()
	lv.CPUEditor, lv.CPUBrowser = (cpuEditor-cpuEditor0)/wall.Seconds(), (cpuBrowser-cpuBrowser0)/wall.Seconds()
	takePeaks()
	lv.PerMinute, lv.CleanPerMinute = summarize(perMin), summarize(clean)
	lv.TurnSeconds, lv.ModelSeconds = summarize(turn), summarize(model)
	lv.TurnOverhead, lv.DialogueSeconds = summarize(overhead), summarize(dialogue)
	return lv, failures, nil
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
