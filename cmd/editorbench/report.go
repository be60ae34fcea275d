package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
)

// stats summarizes samples: how many, their median, min and max.
type stats struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func summarize(xs []float64) stats {
	if len(xs) == 0 {
		return stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stats{N: len(s), Median: m, Min: s[0], Max: s[len(s)-1]}
}

// row is one named figure.
type row struct {
	Name string `json:"name"`
	stats
}

// level is the throughput at one number of concurrent simulators: each
// of its rounds a fresh drive stage with exactly that many windows.
type level struct {
	Sessions        int `json:"sessions"`
	Rounds          int `json:"rounds"`
	ConfigsPerRound int `json:"configs_per_round"`
	// PerMinute is ok dialogues per minute over the whole run, from the
	// drive call (before code-server starts) to the last record: window
	// start-up included.
	PerMinute stats   `json:"dialogues_per_minute_whole_run"`
	Ratio     float64 `json:"ratio_vs_1_session_whole_run,omitempty"`
	// SteadyPerMinute is the same once every window finished its first
	// dialogue (the one that loads it), to the last record.
	SteadyPerMinute stats   `json:"dialogues_per_minute_steady"`
	SteadyRatio     float64 `json:"ratio_vs_1_session_steady,omitempty"`
	StartupSeconds  stats   `json:"seconds_until_every_window_warm"`
	WallSeconds     stats   `json:"seconds_whole_run"`
	TurnSeconds     stats   `json:"turn_seconds"`
	ModelSeconds    stats   `json:"model_seconds_per_turn"`
	TurnOverhead    stats   `json:"turn_minus_model_seconds"`
	DialogueSeconds stats   `json:"dialogue_seconds_warm_window"`
	// CPU cores over the whole runs: code-server's group, Chromium's tree,
	// and this process (driver, capture endpoint, queue, fake model).
	CPUEditor  float64 `json:"cpu_cores_code_server"`
	CPUBrowser float64 `json:"cpu_cores_chromium"`
	CPUSelf    float64 `json:"cpu_cores_this_process"`
	// Steady and Whole are the CPU seconds per ok dialogue in the steady
	// span and over the whole runs (the fake model costs code-server and
	// Chromium nothing: all of it is beyond model time).
	Steady            cpuPerDialogue `json:"cpu_seconds_per_dialogue_steady"`
	Whole             cpuPerDialogue `json:"cpu_seconds_per_dialogue_whole_run"`
	PeakRSSEditorMiB  float64        `json:"peak_rss_code_server_mib"`
	PeakRSSBrowserMiB float64        `json:"peak_rss_chromium_mib"`
	PeakPSSMiB        float64        `json:"peak_pss_mib"`
	OK                int            `json:"ok"`
	Failed            int            `json:"failed"`
	Retried           int            `json:"attempts_retried"`
	// Loads is how many times a window loaded a workspace over the
	// level's runs: its first, and each move to another repository or
	// reload after a failure (each costs about a window's start-up).
	Loads int `json:"workbench_loads"`
}

// cpuPerDialogue is CPU seconds per dialogue: code-server + Chromium
// (Total, and ByClass per kind of process) and this process apart.
type cpuPerDialogue struct {
	Total   float64            `json:"code_server_and_chromium"`
	ByClass map[string]float64 `json:"by_process"`
	Self    float64            `json:"this_process"`
}

// target is a goal and whether the measurement met it.
type target struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
	Op    string  `json:"op"` // "<=" or ">="
	Unit  string  `json:"unit"`
	Known bool    `json:"measured"`
	Met   bool    `json:"met"`
}

func newTarget(name string, value float64, known bool, op string, limit float64, unit string) target {
	met := known && ((op == "<=" && value <= limit) || (op == ">=" && value >= limit))
	return target{Name: name, Value: value, Limit: limit, Op: op, Unit: unit, Known: known, Met: met}
}

// verdict is the target's figure against its limit, a tab, and MET, NOT
// MET or NOT MEASURED.
func (t target) verdict() string {
	verdict, value := "NOT MET", fmt.Sprintf("%.2f%s", t.Value, t.Unit)
	switch {
	case !t.Known:
		verdict, value = "NOT MEASURED", "-"
	case t.Met:
		verdict = "MET"
	}
	return fmt.Sprintf("%s %s %.2f%s\t%s", value, t.Op, t.Limit, t.Unit, verdict)
}

// report is everything the benchmark prints; -json writes it as is.
type report struct {
	Backend browser.Backend `json:"browser_backend"`
	// Standing says each throughput level was measured on a standing
	// worker whose windows were open and warm (editorbench -standing).
	Standing bool `json:"standing,omitempty"`
	// Isolation is what a simulator was in the throughput levels: a
	// window of a shared code-server, or a code-server of its own.
	Isolation  string          `json:"isolation,omitempty"`
	Runs       int             `json:"runs"`
	Rounds     int             `json:"throughput_rounds"`
	CPUs       int             `json:"cpus"`
	LoadBefore string          `json:"load_average_before"`
	LoadAfter  string          `json:"load_average_after"`
	LoadSeen   stats           `json:"load_average_1min_at_phase_ends"`
	Versions   dialog.Versions `json:"versions"`
	Latency    []row           `json:"latency_seconds,omitempty"`
	RSS        []row           `json:"peak_rss_one_window_mib,omitempty"`
	ModelDelay float64         `json:"throughput_model_delay_seconds"`
	PerSession int             `json:"throughput_configs_per_simulator_per_round"`
	Repos      int             `json:"throughput_repositories"`
	Throughput []level         `json:"throughput"`
	// Queue is the farm queue's own cost per job, from -queue-bench.
	Queue    *queueFigures `json:"queue_per_job,omitempty"`
	Targets  []target      `json:"targets"`
	Failures []string      `json:"failures,omitempty"`
}

// print writes the report as compact tables.
func (r *report) print(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "editorbench: %s; %s driven with %s; %d CPUs\n", r.Versions.CodeServer, r.Versions.Chromium, r.Backend, r.CPUs)
	fmt.Fprintf(&b, "load average (1/5/15 min): before %s, after %s; 1-min at the end of each run/level: median %.1f, min %.1f, max %.1f\n",
		r.LoadBefore, r.LoadAfter, r.LoadSeen.Median, r.LoadSeen.Min, r.LoadSeen.Max)
	if r.LoadSeen.Max > float64(r.CPUs) {
		fmt.Fprintf(&b, "warning: the load average exceeded the %d CPUs: other processes competed for the CPU, so step times\n"+
			"are pessimistic and the throughput ratios show CPU contention, not only the driver.\n", r.CPUs)
	}
	b.WriteString("\n")

	if len(r.Latency) > 0 {
		fmt.Fprintf(&b, "LATENCY (s), %d runs, each a fresh Runner (code-server + Chromium) and run folder, 1 simulator,\n", r.Runs)
		fmt.Fprintf(&b, "instant fake model (llmtest -> capture OpenAI responder). Each run drives 1 warm-up config\n"+
			"(opens the workspace: the cold start) then %d measured 2-turn configs; step rows pool the ok measured dialogues.\n",
			len(measuredShapes))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "measure\tn\tmedian\tmin\tmax\t")
		for _, x := range r.Latency {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\n", x.Name, x.N, num(x.N, x.Median), num(x.N, x.Min), num(x.N, x.Max))
		}
		for _, x := range r.RSS {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\n", x.Name, x.N, mib(x.N, x.Median), mib(x.N, x.Min), mib(x.N, x.Max))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	if err := r.printThroughput(&b); err != nil {
		return err
	}
	if err := r.Queue.print(&b); err != nil {
		return err
	}
	b.WriteString("\nTARGETS\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, t := range r.Targets {
		fmt.Fprintf(tw, "%s\t%s\t\n", t.Name, t.verdict())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Failures) > 0 {
		fmt.Fprintf(&b, "\nFAILED DIALOGUES AND RETRIED ATTEMPTS (%d)\n", len(r.Failures))
		for _, f := range r.Failures {
			fmt.Fprintf(&b, "  %s\n", f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func num(n int, v float64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

func mib(n int, v float64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MiB", v)
}

// writeJSON writes the report to path; the reports of several backends
// as {"backends": [...]}.
func writeJSON(path string, reps []*report) error {
	var v any = reps[0]
	if len(reps) > 1 {
		v = map[string][]*report{"backends": reps}
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// load1 is the 1-minute load average, 0 if unknown.
func load1() float64 {
	f := strings.Fields(loadAverage())
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
