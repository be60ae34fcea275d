package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"dialogfarm/adapter"
	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/driver"
	"dialogfarm/driver/browser"
	"dialogfarm/internal/jsonl"
	"dialogfarm/internal/llmtest"
	"dialogfarm/judge"
	"dialogfarm/pipeline"
	"dialogfarm/pool"
	"dialogfarm/respond"
)

// bench holds what every phase shares.
type bench struct {
	opts options
	root string // the dialogfarm checkout (tools/, plugin/)
	work string // this run's work folder
	set  configSet
	// mix is the throughput levels' unit of work: set's throughput mix,
	// or with -repos N the mixes of N copies in turn.
	mix      []dialog.ChatConfig
	instant  *llmtest.Server // answers at once
	slow     *llmtest.Server // answers after opts.ModelDelay
	plugin   string          // plugin id@version, recorded in dialogues
	backend  browser.Backend // the browser backend being measured
	versions dialog.Versions
	log      *zap.Logger
	progress func(format string, args ...any)
}

// rig is one code-server + Chromium (a driver.Runner) with its own capture
// endpoint, whose OpenAI responder asks a fake model.
type rig struct {
	srv    *capture.Server
	runner *driver.Runner
	dc     pipeline.DriveConfig // the drive stage on the runner (pipeline.DriveOnRunner)
	start  time.Duration        // Runner.Start: code-server up (HTTP 200) + Chromium launched
}

func (b *bench) startRig(ctx context.Context, out string, sessions int, model *llmtest.Server) (*rig, error) {
	resp, err := oneModel(model.URL, "bench-model", sessions, b.opts.ModelDelay, b.log)
	if err != nil {
		return nil, fmt.Errorf("responder for the fake model: %w", err)
	}
	rc := driver.DefaultRunConfig(b.root, out)
	resp.Reader = adapter.Set(rc.Adapters)
	srv, err := capture.Listen(ctx, capture.DefaultConfig(), resp, nil, b.log)
	if err != nil {
		return nil, err
	}
	rc.Sessions = sessions
	rc.PluginVersion = b.plugin
	rc.Browser.Backend = b.backend
	r := driver.NewRunner(rc, srv, nil, b.log)
	t0 := time.Now()
	if err := r.Start(ctx); err != nil {
		shutdown(ctx, srv)
		return nil, fmt.Errorf("start editor and browser in %s: %w", out, err)
	}
	g := &rig{srv: srv, runner: r, start: time.Since(t0), dc: pipeline.DriveConfig{Run: rc, Farm: pipeline.DefaultFarmConfig()}}
	if b.versions == (dialog.Versions{}) {
		b.versions = r.Versions()
	}
	return g, nil
}

// close stops the editor and browser, then the capture endpoint.
func (g *rig) close(ctx context.Context) {
	g.runner.Stop()
	shutdown(ctx, g.srv)
}

func shutdown(ctx context.Context, srv *capture.Server) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
}

// latencyRun is what one fresh Runner measured.
type latencyRun struct {
	start      float64 // Runner.Start seconds
	open       float64 // the warm-up config's open_workspace seconds
	openOK     bool
	warm       float64 // the warm-up dialogue without open_workspace
	warmOK     bool
	peakEditor int64
	peakBrowse int64
	peakPSS    int64 // code-server + Chromium
	measured   []dialog.Dialogue
	failures   []string
}

// latencyRun drives the warm-up config and the measured configs on a fresh
// Runner and run folder, through the farm's embedded queue to the
// Runner's slot as `dialogfarm drive` does (pipeline.DriveOnRunner), the
// Runner's start timed apart, sampling memory meanwhile.
func (b *bench) latencyRun(ctx context.Context, i int) (latencyRun, error) {
	var res latencyRun
	out := filepath.Join(b.work, string(b.backend), fmt.Sprintf("latency-%d", i))
	g, err := b.startRig(ctx, out, 1, b.instant)
	if err != nil {
		return res, fmt.Errorf("latency run %d: %w", i, err)
	}
	defer g.close(ctx)
	res.start = g.start.Seconds()
	rss := startRSS(ctx, g.runner.PIDs, 200*time.Millisecond)
	sum, err := pipeline.DriveOnRunner(ctx, g.runner, g.dc, append([]dialog.ChatConfig{b.set.Warm}, b.set.Measured...), b.log)
	res.peakEditor, res.peakBrowse = rss.Stop()
	pe, pb := rss.PeakPSS()
	res.peakPSS = pe + pb
	if err != nil {
		return res, fmt.Errorf("latency run %d: drive: %w", i, err)
	}
	records, err := readRecords(sum.Records)
	if err != nil {
		return res, fmt.Errorf("latency run %d: %w", i, err)
	}
	for _, d := range records {
		if d.Status != dialog.StatusOK {
			res.failures = append(res.failures, describeFailure(fmt.Sprintf("latency run %d", i), d))
		}
		if d.ConfigID != b.set.Warm.ID {
			res.measured = append(res.measured, d)
			continue
		}
		if t, ok := step(d.Setup, "open_workspace"); ok {
			res.open, res.openOK = t, true
		}
		if d.Status == dialog.StatusOK {
			res.warm, res.warmOK = d.Seconds-res.open, true
		}
	}
	return res, nil
}

// readRecords reads a run folder's dialogues.jsonl (a torn last line,
// left by a killed run, is skipped as every reader of a run's log does).
func readRecords(path string) ([]dialog.Dialogue, error) {
	out, _, err := jsonl.ReadLog[dialog.Dialogue](path)
	if err != nil {
		return nil, fmt.Errorf("read records: %w", err)
	}
	return out, nil
}

// step returns the seconds of the named step, if it ran without error.
func step(ts []dialog.StepTiming, name string) (float64, bool) {
	for _, t := range ts {
		if t.Step == name && t.Error == "" {
			return t.Seconds, true
		}
	}
	return 0, false
}

func describeFailure(where string, d dialog.Dialogue) string {
	msg := strings.ReplaceAll(d.Error, "\n", " ")
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:200]) + "..."
	}
	return fmt.Sprintf("%s: %s (%s, %s) failed at %s: %s", where, d.ConfigID, d.Config.File, d.Config.Trigger, d.FailedStep, msg)
}

// turnFigures are one turn's seconds: the driver's steps and the model's
// share as the capture endpoint measured it.
type turnFigures struct {
	query, answer, capture, model float64
}

func (t turnFigures) total() float64 { return t.query + t.answer + t.capture }

func turnsOf(d dialog.Dialogue) []turnFigures {
	var out []turnFigures
	for i, t := range d.Turns {
		n := i + 1
		var f turnFigures
		f.query, _ = step(t.Steps, fmt.Sprintf("turn%d_query", n))
		f.answer, _ = step(t.Steps, fmt.Sprintf("turn%d_answer", n))
		f.capture, _ = step(t.Steps, fmt.Sprintf("turn%d_capture", n))
		f.model = t.Exchange.Seconds
		out = append(out, f)
	}
	return out
}

// latencyRows pools the runs into the latency table and the memory rows.
func latencyRows(runs []latencyRun) (lat, rss []row) {
	var start, open, cold, warm, peakE, peakB []float64
	steps := map[string][]float64{}
	var turn, turn1, turn2, query, answer, capt, model, dialogue []float64
	for _, r := range runs {
		start = append(start, r.start)
		if r.openOK {
			open = append(open, r.open)
			cold = append(cold, r.start+r.open)
		}
		if r.warmOK {
			warm = append(warm, r.warm)
		}
		peakE, peakB = append(peakE, float64(r.peakEditor)/(1<<20)), append(peakB, float64(r.peakBrowse)/(1<<20))
		for _, d := range r.measured {
			if d.Status != dialog.StatusOK {
				continue
			}
			for _, t := range d.Setup {
				steps[t.Step] = append(steps[t.Step], t.Seconds)
			}
			for i, t := range turnsOf(d) {
				turn, query, answer = append(turn, t.total()), append(query, t.query), append(answer, t.answer)
				capt, model = append(capt, t.capture), append(model, t.model)
				if i == 0 {
					turn1 = append(turn1, t.total())
				} else {
					turn2 = append(turn2, t.total())
				}
			}
			if len(d.Turns) == 2 {
				dialogue = append(dialogue, d.Seconds)
			}
		}
	}
	add := func(name string, xs []float64) { lat = append(lat, row{Name: name, stats: summarize(xs)}) }
	add("start: code-server HTTP up + Chromium launched (Runner.Start)", start)
	add("open_workspace: fresh window, navigate to ready", open)
	add("COLD START to ready (start + open_workspace)", cold)
	add("warm-up dialogue after load, 1 turn, excl. open_workspace", warm)
	add("reset (close editors, new chat, show explorer)", steps["reset"])
	add("open_file (Quick Open file:line:col)", steps["open_file"])
	add("cursor (status bar check)", steps["cursor"])
	add("select (Shift keys)", steps["select"])
	for _, t := range dialog.Triggers {
		add("trigger_"+t, steps["trigger_"+t])
	}
	add("ONE TURN: query+answer+capture (all turns)", turn)
	add("  turn 1", turn1)
	add("  turn 2", turn2)
	add("  turnN_query (type, send, question shown)", query)
	add("  turnN_answer (until marked done)", answer)
	add("  turnN_capture (take the exchange)", capt)
	add("  model time inside a turn (capture exchange)", model)
	add("WHOLE 2-TURN DIALOGUE (record seconds, warm window)", dialogue)
	rss = []row{
		{Name: "peak RSS code-server process group (1 window)", stats: summarize(peakE)},
		{Name: "peak RSS Chromium process tree (1 window)", stats: summarize(peakB)},
	}
	return lat, rss
}

// findRow returns the row named name.
func findRow(rows []row, name string) row {
	for _, r := range rows {
		if r.Name == name {
			return r
		}
	}
	return row{Name: name}
}

// memberTimeout bounds one call to the fake model: a minute beyond twice
// its answer time. With a fixed minute, a -model-delay of 60 s or more
// never finished: every call was given up and tried again.
func memberTimeout(answerTime time.Duration) time.Duration {
	return time.Minute + 2*answerTime
}

// oneModel answers through the model gateway with one model (a pool of
// one, judged by the rules), as `dialogfarm --responder openai` does. The
// member takes inFlight calls at once: every simulator's request goes to
// the fake model at once, as to a hosted model, instead of waiting for
// one of the member's default 4 slots (with 8 simulators and a 10 s model
// that wait made the capture's model time 13.6 s median).
// Each call may take answerTime (the fake model's delay) before the member
// gives up on it; see memberTimeout.
func oneModel(url, model string, inFlight int, answerTime time.Duration, log *zap.Logger) (*respond.Responder, error) {
	cfg := pool.DefaultConfig()
	m := pool.DefaultMemberConfig()
	m.Name, m.BaseURL, m.Model, m.Timeout = "openai", url, model, memberTimeout(answerTime)
	m.MaxConcurrency = max(m.MaxConcurrency, inFlight)
	cfg.Members, cfg.CacheDir = []pool.MemberConfig{m}, ""
	p, err := pool.New(cfg, log)
	if err != nil {
		return nil, err
	}
	j, err := judge.New(judge.DefaultConfig(), nil, log)
	if err != nil {
		return nil, err
	}
	r := respond.New(p, j, log)
	r.Name = "openai"
	return r, nil
}
