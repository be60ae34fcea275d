package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"dialogfarm/dashboard"
	"dialogfarm/dialog"
	"dialogfarm/farm"
	"dialogfarm/internal/jsonl"
)

// RunStatus is a run folder's progress as its files tell it.
type RunStatus struct {
	// Total is the number of configs (configs.jsonl), 0 when unknown.
	Total   int `json:"total"`
	OK      int `json:"ok"`
	Failed  int `json:"failed"`
	Dead    int `json:"dead"`
	Retried int `json:"retried"`
	// Refused counts the jobs workers refused, their recipe differing
	// from the run's (attempts.jsonl's lines of step worker_recipe).
	Refused int `json:"refused,omitempty"`
	// PerMinute is dialogues recorded per minute between the first start
	// and the last end.
	PerMinute float64       `json:"per_minute"`
	ETA       time.Duration `json:"eta_ns"`
	// Failures counts failed records by class: the step they failed at.
	Failures map[string]int `json:"failures"`
	// Sessions counts records per simulator: its window, prefixed with
	// its worker process on a farm ("host-pid/s1").
	Sessions map[string]int `json:"sessions"`
	Last     time.Time      `json:"last"`
}

// ReadRunStatus reads OUT/configs.jsonl (if any), dialogues.jsonl,
// attempts.jsonl and dead.jsonl. A torn last line (a run killed
// mid-write) is ignored, as the drive stage ignores it.
func ReadRunStatus(out string) (RunStatus, error) {
	st := RunStatus{Failures: map[string]int{}, Sessions: map[string]int{}}
	if _, err := os.Stat(out); err != nil {
		return st, fmt.Errorf("read the run folder: %w", err)
	}
	var n int
	err := eachLine(filepath.Join(out, ConfigsFile), func([]byte) error { n++; return nil })
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return st, err
	}
	noConfigs := err != nil
	st.Total = n
	var pace dashboard.Pace
	err = eachLine(filepath.Join(out, DialoguesFile), func(line []byte) error {
		var d dialog.Dialogue
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		switch {
		case d.Status == dialog.StatusOK:
			st.OK++
		case d.FailedStep == "dead_letter":
			st.Dead++
			st.Failures[d.FailedStep]++
		default:
			st.Failed++
			st.Failures[d.FailedStep]++
		}
		if sim := d.Session; sim != "" {
			if d.Worker != "" {
				sim = d.Worker + "/" + sim
			}
			st.Sessions[sim]++
		}
		pace.Add(d)
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return st, err
	}
	if err != nil && noConfigs {
		return st, fmt.Errorf("%s is not a run folder: it has neither %s nor %s", out, ConfigsFile, DialoguesFile)
	}
	err = eachLine(filepath.Join(out, AttemptsFile), func(line []byte) error {
		var a struct {
			FailedStep string `json:"failed_step"`
		}
		if err := json.Unmarshal(line, &a); err != nil {
			return err
		}
		if a.FailedStep == farm.FailedStepRecipe {
			st.Refused++
		} else {
			st.Retried++
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return st, err
	}
	st.Last, st.PerMinute, st.ETA = pace.Last(), pace.PerMinute(), pace.ETA(st.Total)
	return st, nil
}

// eachLine calls f with every line of path. A torn last line of a killed
// run is skipped; any other line f rejects is an error naming it.
func eachLine(path string, f func([]byte) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	_, err = jsonl.EachLog(file, path, func(_ int, line []byte) error { return f(line) })
	return err
}

// Text renders the status for a terminal.
func (st RunStatus) Text() string {
	var b strings.Builder
	done := st.OK + st.Failed + st.Dead
	total := "?"
	if st.Total > 0 {
		total = fmt.Sprint(st.Total)
	}
	fmt.Fprintf(&b, "progress: %d of %s configs recorded: %d ok, %d failed, %d dead-lettered; %d failed attempts retried\n",
		done, total, st.OK, st.Failed, st.Dead, st.Retried)
	if st.Refused > 0 {
		fmt.Fprintf(&b, "refused: %d jobs by workers whose recipe differs from the run's (failed_step %s in %s)\n",
			st.Refused, farm.FailedStepRecipe, AttemptsFile)
	}
	if st.PerMinute > 0 {
		fmt.Fprintf(&b, "rate: %.1f dialogues/min", st.PerMinute)
		if st.ETA > 0 {
			fmt.Fprintf(&b, ", about %s left at that rate", st.ETA.Round(time.Second))
		}
		fmt.Fprintf(&b, "; last record at %s\n", st.Last.Format(time.RFC3339))
	}
	if len(st.Failures) > 0 {
		b.WriteString("failures by class:")
		for _, k := range sortedKeys(st.Failures) {
			fmt.Fprintf(&b, " %s %d,", k, st.Failures[k])
		}
		b.WriteString("\n")
	}
	if len(st.Sessions) > 0 {
		b.WriteString("records per simulator:")
		for _, k := range sortedKeys(st.Sessions) {
			fmt.Fprintf(&b, " %s %d,", k, st.Sessions[k])
		}
		b.WriteString("\n")
	}
	return strings.ReplaceAll(b.String(), ",\n", "\n")
}
