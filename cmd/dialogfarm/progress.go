package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"go.uber.org/zap"
	"golang.org/x/term"
)

// progress shows how far a long command has got, on stderr: a bar with
// count, rate and ETA (schollz/progressbar) when stderr is a terminal;
// otherwise a plain line at most every plainEvery and one at the end, so
// logs and CI output stay readable; with --log-format json, the same
// numbers as log entries.
type progress struct {
	task  string
	total int
	bar   *progressbar.ProgressBar
	// plain, when set, receives the plain lines.
	plain func(line string, done int, rate float64, left time.Duration)
	now   func() time.Time

	mu      sync.Mutex
	done    int
	start   time.Time
	printed time.Time
}

const plainEvery = 10 * time.Second

// newProgress starts reporting task, which has total steps.
func (a *app) newProgress(task string, total int) *progress {
	p := &progress{task: task, total: total, now: time.Now}
	p.start, p.printed = p.now(), p.now()
	if f, ok := a.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && a.logFormat != logJSON {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription(task),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(unitOf(task)),
			progressbar.OptionSetPredictTime(true), progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(a.stderr) }),
			progressbar.OptionSetWidth(30), progressbar.OptionUseANSICodes(true))
		return p
	}
	if a.logFormat == logJSON {
		p.plain = func(_ string, done int, rate float64, left time.Duration) {
			a.log.Info("progress", zap.String("task", task), zap.Int("done", done), zap.Int("total", total),
				zap.Float64("per_second", rate), zap.Duration("left", left))
		}
		return p
	}
	w := a.stderr
	p.plain = func(line string, _ int, _ float64, _ time.Duration) { fmt.Fprintln(w, line) }
	return p
}

// unitOf is what one step of task is called on the bar.
func unitOf(task string) string {
	switch task {
	case "drive":
		return "configs"
	case "judge":
		return "dialogues"
	case "analyze":
		return "queries"
	case "export":
		return "records"
	case "configs index":
		return "files"
	case "configs queries":
		return "queries"
	}
	return "steps"
}

// Add records n more steps done.
func (p *progress) Add(n int) { p.Set(-n) }

// Set records done steps in all (a negative value adds to the count).
func (p *progress) Set(done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if done < 0 {
		done = p.done - done
	}
	// Parallel workers may report out of order: the count never goes back.
	p.done = min(max(done, p.done), p.total)
	if p.bar != nil {
		_ = p.bar.Set(p.done)
		return
	}
	if now := p.now(); p.done == p.total || now.Sub(p.printed) >= plainEvery {
		p.printed = now
		p.emit(now)
	}
}

// emit prints the plain line for the current count.
func (p *progress) emit(now time.Time) {
	if p.plain == nil || p.total == 0 {
		return
	}
	elapsed := now.Sub(p.start)
	rate, left := 0.0, time.Duration(0)
	if elapsed > 0 && p.done > 0 {
		rate = float64(p.done) / elapsed.Seconds()
		left = time.Duration(float64(p.total-p.done) / rate * float64(time.Second))
	}
	line := fmt.Sprintf("%s: %d/%d %s (%d%%), %.1f/s, ", p.task, p.done, p.total, unitOf(p.task), 100*p.done/p.total, rate)
	if p.done == p.total {
		line += "took " + elapsed.Round(time.Second).String()
	} else if p.done == 0 {
		line += "time left unknown"
	} else {
		line += left.Round(time.Second).String() + " left"
	}
	p.plain(line, p.done, rate, left)
}

// Finish ends the report: the bar completes, or a last plain line is
// printed if the count did not reach the total (an error stopped it).
func (p *progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		if p.done < p.total {
			_ = p.bar.Exit()
		}
		return
	}
	if p.done < p.total {
		p.emit(p.now())
	}
}

// Log formats.
const (
	logConsole = "console"
	logJSON    = "json"
)
