package driver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/adapter"
	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
)

func keelAdapter(t *testing.T) *adapter.Adapter {
	t.Helper()
	a, err := adapter.Load(filepath.Join("testdata", "keel.yaml"), "..")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func keelConfigs(prefix string, n int) []dialog.ChatConfig {
	qs := []string{"What does this function do?", "Name one Python linter", "Is it safe for empty input?", "Why return low here?"}
	var out []dialog.ChatConfig
	for i := range n {
		out = append(out, dialog.ChatConfig{ID: prefix + itoa(i+1), Repo: testRepo, File: "pkg/calc.py", Language: "python",
			Cursor: configPtr(configPos(4+i, 1)), Trigger: dialog.TriggerPanel, Instruction: dialog.InstructionFreeText,
			Plugin: "keel", Turns: configTurns(qs[i%len(qs)])})
	}
	return out
}

// TestEditorPerSimulator drives Keel (testdata/keel), whose endpoint is
// only in files every window of one editor shares (the port in its
// globalStorage, the path under HOME), written by its adapter with
// {{capture_port}} and {{capture_path}}, at 2 simulators with isolation
// editor, through the farm's queue: each simulator gets a code-server of
// its own whose files hold its session, each request arrives on its own
// session's path, each dialogue is recorded once; a simulator's crashed
// editor is started again for it alone. All of it is the driver's and the
// editor's side, the same on every browser backend, so it runs on the
// default one (go-rod); chromedp driving two simulators with an editor
// each is cmd/dialogfarm's TestHeronOnboarded/drive-chromedp.
func TestEditorPerSimulator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	rc := DefaultRunConfig(root, t.TempDir())
	if _, err := os.Stat(rc.Editor.Bin); err != nil {
		t.Fatalf("code-server is not installed (%v): run `make setup`", err)
	}
	rc.Adapters, rc.Sessions = []*adapter.Adapter{keelAdapter(t)}, 2
	rc.Timeouts.Answer = time.Minute
	log := zaptest.NewLogger(t)
	model := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		rep := e2eAnswer(r)
		rep.Delay = 300 * time.Millisecond // both simulators wait for answers at once
		return rep
	})
	sink := &exchangeSink{}
	srv := listenCapture(ctx, t, capture.DefaultConfig(), oneModel(t, model.URL, "keel-model", log), sink, log)
	r := NewRunner(rc, srv, nil, log)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)

	configs := keelConfigs("keel-", 4)
	sum := mustDriveOnFarm(ctx, t, r, configs, 1)
	records := readRecords(t, sum.Records) // fails on a config recorded twice
	if sum.OK != len(configs) || len(records) != len(configs) {
		for _, d := range records {
			t.Logf("%s: %s %s %s (artifacts %s)", d.ConfigID, d.Status, d.FailedStep, d.Error, d.Artifacts)
		}
		t.Fatalf("summary %+v, %d records, want %d ok", sum, len(records), len(configs))
	}
	sessions := map[string]int{}
	for _, d := range records {
		sessions[d.Session]++
		for i, turn := range d.Turns {
			// The request came on the path of the session that drove
			// the dialogue: its own editor's files named it.
			if turn.Exchange.Session != d.Session || turn.Answer == "" || turn.Shown != turn.Answer {
				t.Errorf("%s turn %d: exchange of session %q (the dialogue's is %q), answer %q shown %q",
					d.ConfigID, i+1, turn.Exchange.Session, d.Session, turn.Answer, turn.Shown)
			}
			var body struct{ Model string }
			if err := json.Unmarshal(turn.Request, &body); err != nil || body.Model != "keel-model" {
				t.Errorf("%s turn %d: request %s", d.ConfigID, i+1, turn.Request)
			}
		}
	}
	if len(sessions) != 2 {
		t.Fatalf("dialogues by session %v, want both simulators", sessions)
	}
	sink.mu.Lock()
	for _, ex := range sink.all {
		if ex.Session != "s1" && ex.Session != "s2" {
			t.Errorf("a request of session %q", ex.Session)
		}
	}
	sink.mu.Unlock()
	editors, _ := r.PIDs()
	if len(editors) != 2 || editors[0] == editors[1] {
		t.Fatalf("editors %v, want one code-server per simulator", editors)
	}
	for _, id := range []string{"s1", "s2"} {
		home, err := os.ReadFile(filepath.Join(r.cfg.Out, "editors", id, "home", ".keel", "config.yaml"))
		if err != nil || !strings.Contains(string(home), "/s/"+id+"/v1") {
			t.Errorf("%s's HOME config %q (%v)", id, home, err)
		}
	}
	var pg processGroups
	if data, err := os.ReadFile(filepath.Join(r.cfg.Out, processesFile)); err != nil || json.Unmarshal(data, &pg) != nil || len(pg.Editors) != 2 {
		t.Errorf("%s holds %+v (%v): want both editors, for a killed run's successor", processesFile, pg, err)
	}
	t.Run("a simulator's crashed editor is started again for it alone", func(t *testing.T) {
		editors, _ := r.PIDs()
		if err := syscall.Kill(-editors[0], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		sum := mustDriveOnFarm(ctx, t, r, keelConfigs("after-crash-", 4), 1)
		if sum.OK != 4 {
			for _, d := range readRecords(t, sum.Records) {
				t.Logf("%s: %s %s %s", d.ConfigID, d.Status, d.FailedStep, d.Error)
			}
			t.Fatalf("after a crash: %+v", sum.Summary)
		}
		now, _ := r.PIDs()
		if len(now) != 2 || now[0] == editors[0] || now[1] != editors[1] {
			t.Errorf("editors %v after killing %d of %v: want the first started again, the second kept", now, editors[0], editors)
		}
	})
}

// TestIsolationWindowRefusesPerSessionFiles: run with --isolation window,
// an adapter whose files hold per-session placeholders is refused before
// anything starts, naming the fields and what to set.
func TestIsolationWindowRefusesPerSessionFiles(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	rc := DefaultRunConfig(root, t.TempDir())
	rc.Adapters, rc.Isolation = []*adapter.Adapter{keelAdapter(t)}, adapter.IsolationWindow
	log := zaptest.NewLogger(t)
	srv := listenCapture(context.Background(), t, capture.DefaultConfig(), capture.Offline{}, nil, log)
	r := NewRunner(rc, srv, nil, log)
	err = r.Start(context.Background())
	if err == nil {
		r.Stop()
		t.Fatal("started")
	}
	if msg := err.Error(); !strings.Contains(msg, "start the run with isolation window") || !strings.Contains(msg, "field files[1].content: placeholder {{capture_path}} differs per session") ||
		!strings.Contains(msg, "set isolation: editor") {
		t.Errorf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(rc.Out, "editor")); err == nil {
		t.Errorf("the editor's folder was made")
	}
}
