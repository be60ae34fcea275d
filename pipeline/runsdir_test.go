package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/driver"
)

func loadSpec() *Spec {
	return &Spec{APIVersion: APIVersion, Kind: Kind, Nodes: []Node{{ID: "recorded", Op: "load_dialogues",
		Params: map[string]any{"path": "../sft/testdata/dialogues.jsonl"}}}}
}

// waitRun waits until run id is no longer running.
func waitRun(t *testing.T, r *Runs, id string) RunInfo {
	t.Helper()
	ch, stop := r.Subscribe()
	defer stop()
	for {
		info, err := r.Get(id)
		if err != nil || info.Status != RunRunning {
			return info
		}
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("run %s still running", id)
		}
	}
}

// TestRunsOutliveTheServer: a run that finished is listed as it ended by
// the next server over the same runs folder; one that was running when
// its server stopped is listed as interrupted; new runs get new ids.
func TestRunsOutliveTheServer(t *testing.T) {
	dir := t.TempDir()
	log := zaptest.NewLogger(t)
	reg := NewRegistry()
	hold := make(chan struct{})
	env := func(out string) (RunEnv, func(), error) {
		return RunEnv{Out: out, Log: log, BeforeNode: func(*Node, map[string]Value, map[string]Value) error {
			<-hold
			return nil
		}}, func() {}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel() }()
	first := NewRuns(ctx, dir, reg, env, log)
	close(hold)
	done, err := first.Start("a", loadSpec(), 1, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	if info := waitRun(t, first, done.ID); info.Status != RunDone {
		t.Fatalf("first run: %+v", info)
	}
	hold = make(chan struct{}) // the next run blocks in its node, as the server "dies"
	running, err := first.Start("b", loadSpec(), 3, false, 0)
	if err != nil {
		t.Fatal(err)
	}

	second := NewRuns(context.Background(), dir, reg, env, log)
	list := second.List()
	if len(list) != 2 || list[0].ID != running.ID || list[1].ID != done.ID {
		t.Fatalf("the next server lists %+v", list)
	}
	if list[0].Status != RunInterrupted || list[0].Revision != 3 || list[0].Finished.IsZero() || list[0].Nodes[0].Status != RunInterrupted {
		t.Fatalf("the run that was running: %+v", list[0])
	}
	if list[1].Status != RunDone || list[1].Nodes[0].Status != NodeDone || list[1].Spec == nil {
		t.Fatalf("the finished run: %+v", list[1])
	}
	if _, err := second.Cancel(running.ID); err != nil {
		t.Fatalf("cancel an interrupted run: %v", err)
	}
	close(hold)
	cancel()
	first.Wait()
	third, err := second.Start("a", loadSpec(), 1, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	if third.ID == done.ID || third.ID == running.ID || third.ID != "a-3" {
		t.Fatalf("a new run's id %s repeats an old one", third.ID)
	}
	waitRun(t, second, third.ID)
}

// TestRunFoldersOfDialogfarmRun: folders `dialogfarm run` made in the runs
// folder are listed after the server's runs, with a status read from
// their files (done with a report or all nodes done, failed, running
// while their lock is held, incomplete otherwise); they are not
// cancelled from here.
func TestRunFoldersOfDialogfarmRun(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, files map[string]string) string {
		out := filepath.Join(dir, name)
		for f, data := range files {
			p := filepath.Join(out, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	mk("demo", map[string]string{ManifestFile: "{}", ConfigsFile: "{}\n", DialoguesFile: "{}\n", ReportFile: "{}"})
	mk("half", map[string]string{ManifestFile: "{}", ConfigsFile: "{}\n"})
	mk("graph", map[string]string{"nodes/plan.state.json": `{"id":"plan","status":"done"}`,
		"nodes/drive.state.json": `{"id":"drive","status":"failed","error":"x"}`})
	newer := mk("newer", map[string]string{ManifestFile: `{"profile":"default","n":2,"seed":7,"repos":["r"],"min_score":4,"allow_offline":true}`,
		"nodes/export.state.json": `{"id":"export","status":"done"}`})
	live := mk("live", map[string]string{ManifestFile: "{}"})
	mk("notarun", map[string]string{"x.txt": "x"})
	lock, err := driver.LockRunFolder(live)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()

	r := NewRuns(context.Background(), dir, NewRegistry(), nil, zaptest.NewLogger(t))
	want := map[string]string{"demo": RunDone, "half": RunIncomplete, "graph": RunFailed, "live": RunRunning, "newer": RunDone}
	got := map[string]string{}
	for _, info := range r.List() {
		if !info.External || info.Out != filepath.Join(dir, info.ID) {
			t.Errorf("listed %+v", info)
		}
		got[info.ID] = info.Status
	}
	if len(got) != len(want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	for id, st := range want {
		if got[id] != st {
			t.Errorf("%s: %s, want %s", id, got[id], st)
		}
		if info, err := r.Get(id); err != nil || info.Status != st {
			t.Errorf("get %s: %+v %v", id, info, err)
		}
	}
	// A folder of run (RunSpec on the default pipeline) gets that spec back
	// from its run.json, so its dashboard keeps turns as the run did.
	info, err := r.Get("newer")
	if err != nil || info.Spec == nil {
		t.Fatalf("newer: %+v %v", info, err)
	}
	if src := DashboardSources(info.Spec, info.Nodes, newer); src.Export.MinScore != 4 || !src.Export.AllowOffline {
		t.Errorf("the dashboard of %s keeps turns by %+v, not run.json's", newer, src.Export)
	}
	if _, err := r.Cancel("live"); !errors.Is(err, ErrExternal) {
		t.Errorf("cancel a run of dialogfarm run: %v", err)
	}
	for _, id := range []string{"notarun", "../demo", ".runs", ""} {
		if _, err := r.Get(id); !errors.Is(err, ErrNoRun) {
			t.Errorf("get %q: %v", id, err)
		}
	}
}
