package driver

import (
	"context"
	"slices"
	"testing"
	"time"

	"dialogfarm/dialog"
	"dialogfarm/driver/workbench"
)

// TestWindowsTakeTurnsAtTheirSteps drives two windows that share one
// renderer process on the real code-server and checks, from the records'
// step timings, that their steps up to the first query never overlapped:
// a window takes its turn (ui_turn) only once the other has sent its
// query, unless it waited the bound out. The dialogues' starts are
// spaced by the run's StartSpacing.
func TestWindowsTakeTurnsAtTheirSteps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The model takes long enough that one window's steps fall into the
	// other's wait for its answer, as they do in a farm.
	r := startRealRunner(ctx, t, 1500*time.Millisecond, func(rc *RunConfig) {
		rc.Sessions, rc.Browser.RendererProcesses, rc.StartSpacing = 2, 1, time.Second
	})

	var configs []dialog.ChatConfig
	for i, c := range e2eConfigs()[:3] {
		id := c.ID
		for j := range 2 {
			c.ID, c.Repo = id+"-"+itoa(2*i+j), testRepo
			configs = append(configs, c)
		}
	}
	sum := mustDriveOnFarm(ctx, t, r, configs, 1)
	records := readRecords(t, sum.Records)
	if sum.OK != len(configs) {
		for _, d := range records {
			t.Logf("%s: %s %s %s", d.ConfigID, d.Status, d.FailedStep, d.Error)
		}
		t.Fatalf("summary %+v, want %d ok", sum, len(configs))
	}

	// Each record's turn, from its step timings: from the end of ui_turn
	// (the turn taken) to the start of turn1_answer (the turn ended).
	type held struct {
		id, session string
		from, to    time.Time
	}
	var turns []held
	sessions := map[string]bool{}
	for _, d := range records {
		sessions[d.Session] = true
		at, took := d.StartedAt, false
		var h held
		for _, st := range d.Setup {
			at = at.Add(time.Duration(st.Seconds * float64(time.Second)))
			if st.Step == "ui_turn" {
				took = true
				h = held{id: d.ConfigID, session: d.Session, from: at}
				if st.Seconds >= workbench.UITurnWait.Seconds() {
					took = false // waited the bound out: went on without a turn
				}
			}
		}
		if len(d.Turns) == 0 || len(d.Turns[0].Steps) == 0 || d.Turns[0].Steps[0].Step != "turn1_query" {
			t.Fatalf("%s: turn 1 steps %+v, want turn1_query first", d.ConfigID, d.Turns)
		}
		if h.id == "" {
			t.Errorf("%s: no ui_turn step among %+v", d.ConfigID, d.Setup)
			continue
		}
		if took {
			h.to = at.Add(time.Duration(d.Turns[0].Steps[0].Seconds * float64(time.Second)))
			turns = append(turns, h)
		}
	}
	if len(sessions) != 2 {
		t.Fatalf("configs ran on %d windows, want 2", len(sessions))
	}
	// A record starts just after its start was let through, so two starts
	// are at least the spacing apart, less a few milliseconds.
	starts := make([]time.Time, 0, len(records))
	for _, d := range records {
		starts = append(starts, d.StartedAt)
	}
	slices.SortFunc(starts, time.Time.Compare)
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < time.Second-50*time.Millisecond {
			t.Errorf("two dialogues started %v apart, want at least the 1 s StartSpacing (starts %v)", gap, starts)
		}
	}
	if len(turns) < len(configs)/2 {
		t.Fatalf("only %d of %d dialogues took a turn", len(turns), len(configs))
	}
	// The timings add up step durations from the record's start, so they
	// read a little early (the work before the first step and between
	// steps, a few milliseconds; more under -race on a busy machine). Two
	// windows stepping at once overlapped by ~0.5 s.
	const slack = 100 * time.Millisecond
	for i, a := range turns {
		for _, b := range turns[i+1:] {
			if a.session != b.session && a.from.Before(b.to.Add(-slack)) && b.from.Before(a.to.Add(-slack)) {
				t.Errorf("%s (%s) stepped %s-%s while %s (%s) stepped %s-%s", a.id, a.session, a.from.Format("15:04:05.000"), a.to.Format("15:04:05.000"),
					b.id, b.session, b.from.Format("15:04:05.000"), b.to.Format("15:04:05.000"))
			}
		}
	}
}
