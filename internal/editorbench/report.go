package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"dialogfarm/dialog"
	"dialogfarm/driver"
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

// level is the throughput at one number of concurrent simulators.
type level struct {
	Sessions          int     `json:"sessions"`
	Rounds            int     `json:"rounds"`
	DialoguesPerRound int     `json:"dialogues_per_round"`
	PerMinute         stats   `json:"dialogues_per_minute"`
	Ratio             float64 `json:"ratio_vs_1_session,omitempty"`
	CleanPerMinute    stats   `json:"dialogues_per_minute_rounds_without_failures"`
	CleanRatio        float64 `json:"ratio_vs_1_session_rounds_without_failures,omitempty"`
	TurnSeconds       stats   `json:"turn_seconds"`
	ModelSeconds      stats   `json:"model_seconds_per_turn"`
	TurnOverhead      stats   `json:"turn_minus_model_seconds"`
	DialogueSeconds   stats   `json:"dialogue_seconds"`
	CPUEditor         float64 `json:"cpu_cores_code_server_in_rounds"`
	CPUBrowser        float64 `json:"cpu_cores_chromium_in_rounds"`
	// CPUPerDialogue is code-server + Chromium CPU seconds per ok
	// dialogue (the fake model costs them nothing: all of it is beyond
	// model time), and CPUByClass the same per kind of process.
	CPUPerDialogue float64            `json:"cpu_seconds_per_dialogue"`
	CPUByClass     map[string]float64 `json:"cpu_seconds_per_dialogue_by_process"`
	OK             int                `json:"ok"`
	Failed         int                `json:"failed"`
	WarmFailed     int                `json:"warmup_attempts_failed"`
	ColdWindows    int                `json:"windows_not_warm"`
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

// report is everything the benchmark prints; -json writes it as is.
type report struct {
	Backend    driver.Backend  `json:"browser_backend"`
	Runs       int             `json:"runs"`
	CPUs       int             `json:"cpus"`
	LoadBefore string          `json:"load_average_before"`
	LoadAfter  string          `json:"load_average_after"`
	LoadSeen   stats           `json:"load_average_1min_at_phase_ends"`
	Versions   dialog.Versions `json:"versions"`
	Latency    []row           `json:"latency_seconds"`
	RSS        []row           `json:"peak_rss_one_window_mib"`
	ModelDelay float64         `json:"throughput_model_delay_seconds"`
	PerSession int             `json:"throughput_dialogues_per_simulator_per_round"`
	Throughput []level         `json:"throughput"`
	Windows    int             `json:"throughput_windows"`
	IdleCS     float64         `json:"throughput_idle_cpu_cores_code_server"`
	IdleChr    float64         `json:"throughput_idle_cpu_cores_chromium"`
	// IdleByClass is the idle CPU cores per kind of process.
	IdleByClass map[string]float64 `json:"throughput_idle_cpu_cores_by_process"`
	PeakCSMiB   float64            `json:"throughput_peak_rss_code_server_mib"`
	PeakChrMiB  float64            `json:"throughput_peak_rss_chromium_mib"`
	// PSSOneMiB is the median peak PSS of code-server + Chromium with one
	// window (latency runs), PeakPSSMiB the peak over the throughput phase.
	PSSOneMiB  float64  `json:"peak_pss_one_window_mib"`
	PeakPSSMiB float64  `json:"throughput_peak_pss_mib"`
	Targets    []target `json:"targets"`
	Failures   []string `json:"failures,omitempty"`
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

	fmt.Fprintf(&b, "\nTHROUGHPUT, fake model answering in %.1f s (llmtest Delay -> capture OpenAI responder). One code-server\n"+
		"and Chromium with %d windows, each warmed first by 1 untimed config (window load + first chat open). Level n\n"+
		"drives on the first n windows while the others idle. %d rounds; each round runs every level once (order\n"+
		"rotated per round, so the machine's changing load falls on all levels alike), a level's round being %d\n"+
		"dialogues per simulator from one shared queue cycling the 4-config mix (one per trigger, 2 turns each),\n"+
		"timed from dispatching its first config to its last one finishing. dial/min counts ok dialogues; a failed\n"+
		"dialogue's time stays in its round; 'clean rounds' had no failure. turn-model = turn steps minus the\n"+
		"capture's exchange time. CPU = code-server group + Chromium tree CPU seconds per second of the level's rounds.\n",
		r.ModelDelay, r.Windows, r.Runs, r.PerSession)
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "sims\trounds x dial\tdial/min med (min-max)\tvs 1\tclean rounds: n, dial/min med, vs 1\tfailed (warm-up tries failed)\t")
	for _, l := range r.Throughput {
		ratio := "-"
		if l.Ratio > 0 {
			ratio = fmt.Sprintf("%.2fx", l.Ratio)
		}
		clean := fmt.Sprintf("0 of %d", l.Rounds)
		if l.CleanPerMinute.N > 0 {
			clean = fmt.Sprintf("%d of %d, %.1f, %.2fx", l.CleanPerMinute.N, l.Rounds, l.CleanPerMinute.Median, l.CleanRatio)
		}
		fmt.Fprintf(tw, "%d\t%d x %d\t%.1f (%.1f-%.1f)\t%s\t%s\t%d (%d)\t\n",
			l.Sessions, l.Rounds, l.DialoguesPerRound, l.PerMinute.Median, l.PerMinute.Min, l.PerMinute.Max, ratio, clean,
			l.Failed, l.WarmFailed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "sims\tdialogue med (s)\tturn med (s)\tmodel med (s)\tturn-model med (max) (s)\tCPU cores code-server + Chromium (of %d)\t\n", r.CPUs)
	for _, l := range r.Throughput {
		fmt.Fprintf(tw, "%d\t%.2f\t%.2f\t%.2f\t%.2f (%.2f)\t%.2f + %.2f = %.2f\t\n",
			l.Sessions, l.DialogueSeconds.Median, l.TurnSeconds.Median, l.ModelSeconds.Median, l.TurnOverhead.Median,
			l.TurnOverhead.Max, l.CPUEditor, l.CPUBrowser, l.CPUEditor+l.CPUBrowser)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n := len(r.Throughput); n > 0 {
		top := r.Throughput[n-1]
		fmt.Fprintf(&b, "\nCPU seconds per dialogue by process (code-server + Chromium, all windows, idle ones included):\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		classes := make([]string, 0, len(top.CPUByClass))
		for k := range top.CPUByClass {
			classes = append(classes, k)
		}
		sort.Slice(classes, func(i, j int) bool { return top.CPUByClass[classes[i]] > top.CPUByClass[classes[j]] })
		fmt.Fprint(tw, "  process")
		for _, l := range r.Throughput {
			fmt.Fprintf(tw, "\t%d sims\t", l.Sessions)
		}
		fmt.Fprintln(tw)
		for _, k := range append(classes, "total") {
			fmt.Fprintf(tw, "  %s", k)
			for _, l := range r.Throughput {
				v := l.CPUByClass[k]
				if k == "total" {
					v = l.CPUPerDialogue
				}
				share := 0.0
				if l.CPUPerDialogue > 0 {
					share = 100 * v / l.CPUPerDialogue
				}
				fmt.Fprintf(tw, "\t%.2f s\t%.0f%%", v, share)
			}
			fmt.Fprintln(tw, "\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, l := range r.Throughput {
			fmt.Fprintf(&b, "%d sims: %.2f CPU seconds per dialogue\n", l.Sessions, l.CPUPerDialogue)
		}
	}
	fmt.Fprintf(&b, "the %d windows warm and idle (%.0f s before the rounds) use %.2f + %.2f = %.2f CPU cores (code-server + Chromium)\n",
		r.Windows, idleWindow.Seconds(), r.IdleCS, r.IdleChr, r.IdleCS+r.IdleChr)
	if len(r.IdleByClass) > 0 {
		classes := make([]string, 0, len(r.IdleByClass))
		for k := range r.IdleByClass {
			classes = append(classes, k)
		}
		sort.Slice(classes, func(i, j int) bool { return r.IdleByClass[classes[i]] > r.IdleByClass[classes[j]] })
		var parts []string
		for _, k := range classes {
			if r.IdleByClass[k] >= 0.005 {
				parts = append(parts, fmt.Sprintf("%s %.2f", k, r.IdleByClass[k]))
			}
		}
		fmt.Fprintf(&b, "  idle by process (cores): %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, "peak RSS over the throughput phase (%d windows): code-server group %.0f MiB, Chromium tree %.0f MiB\n",
		r.Windows, r.PeakCSMiB, r.PeakChrMiB)
	fmt.Fprintf(&b, "peak PSS (code-server + Chromium): 1 window %.0f MiB, %d windows %.0f MiB\n", r.PSSOneMiB, r.Windows, r.PeakPSSMiB)

	for _, l := range r.Throughput {
		if l.ColdWindows > 0 {
			fmt.Fprintf(&b, "note: %d windows failed every warm-up try; they load inside the first round that uses them\n", l.ColdWindows)
			break
		}
	}
	b.WriteString("\nTARGETS\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, t := range r.Targets {
		verdict, value := "NOT MET", fmt.Sprintf("%.2f%s", t.Value, t.Unit)
		switch {
		case !t.Known:
			verdict, value = "NOT MEASURED", "-"
		case t.Met:
			verdict = "MET"
		}
		fmt.Fprintf(tw, "%s\t%s %s %.2f%s\t%s\t\n", t.Name, value, t.Op, t.Limit, t.Unit, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Failures) > 0 {
		fmt.Fprintf(&b, "\nFAILED DIALOGUES (%d)\n", len(r.Failures))
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
