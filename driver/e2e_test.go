package driver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"dialogfarm/adapter"
	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
	"dialogfarm/driver/editor"
	"dialogfarm/internal/llmtest"
	"dialogfarm/judge"
	"dialogfarm/pool"
	"dialogfarm/respond"
)

// The end-to-end test drives the real code-server (installed by `make
// setup` into ../tools) in the real Chromium, through the reference plugin,
// and checks the requests the plugin sent against the files themselves.

// TestEndToEnd runs the whole suite once per browser backend: both
// plugins, every trigger, selections, two turns, commands, auxiliary calls
// and fidelity, a failure tried again, the lockdown, no file highlighted,
// a crash and a re-run; every batch goes through the farm's queue to the
// Runner's slots, as `dialogfarm drive` does (driveOnFarm).
func TestEndToEnd(t *testing.T) {
	for _, b := range []browser.Backend{browser.BackendRod, browser.BackendChromedp} {
		t.Run(string(b), func(t *testing.T) { endToEnd(t, b) })
	}
}

func endToEnd(t *testing.T, backend browser.Backend) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// The run folder stays when the test fails, for its screenshots.
	out, err := os.MkdirTemp("", "dialogfarm-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("run folder kept: %s", out)
			return
		}
		os.RemoveAll(out)
	})
	rc := DefaultRunConfig(root, out)
	if _, err := os.Stat(rc.Editor.Bin); err != nil {
		t.Fatalf("code-server is not installed (%v): run `make setup`", err)
	}
	rc.Browser.Backend = backend
	seen, logs := observer.New(zap.DebugLevel)
	log := zaptest.NewLogger(t, zaptest.WrapOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return zapcore.NewTee(c, seen) })))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	model := llmtest.New(t, e2eAnswer)
	upstream := oneModel(t, model.URL, "e2e-model", log)
	// Queries containing FAIL-ME get an error from the responder, as from a
	// dead model endpoint; KILL-EDITOR kills code-server while the plugin
	// waits for its answer.
	var r *Runner
	responder := capture.ResponderFunc(func(ctx context.Context, req capture.Request) (capture.Answer, error) {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "FAIL-ME") {
			return capture.Answer{Responder: "e2e"}, errors.New("model endpoint is down")
		}
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "KILL-EDITOR") {
			_ = syscall.Kill(-editorPID(r), syscall.SIGKILL)
		}
		return upstream.Respond(ctx, req)
	})
	quill := quillAdapter(t, root)
	rc.Adapters = append(rc.Adapters, quill)
	cc := capture.DefaultConfig()
	cc.Classify = adapter.Classify(rc.Adapters)
	sink := &exchangeSink{}
	srv := listenCapture(ctx, t, cc, responder, sink, log)
	rc.PluginVersion = pluginVersion(t, root)
	rc.Timeouts.Answer = time.Minute
	if backend == browser.BackendRod {
		// The window is replaced once, before the first run's last
		// config, which must pass on the fresh window (the same on
		// every backend: checked once).
		rc.Recycle.After = len(e2eConfigs()) + len(quillConfigs()) - 1
	}
	r = NewRunner(rc, srv, nil, log)
	setFakeKeys(t)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)

	configs := append(e2eConfigs(), quillConfigs()...)
	for i := range configs {
		configs[i].Repo = testRepo
		if err := configs[i].Validate(); err != nil {
			t.Fatal(err)
		}
	}
	stopWatch := watchPortScans(func() int { return editorPID(r) })
	sum, err := driveOnFarm(ctx, t, r, configs, 1)
	scans, group := stopWatch()
	if err != nil {
		t.Fatal(err)
	}
	records := readRecords(t, sum.Records)
	if sum.OK != len(configs) || sum.Failed != 0 {
		for _, d := range records {
			t.Logf("%s: %s %s %s (artifacts %s)", d.ConfigID, d.Status, d.FailedStep, d.Error, d.Artifacts)
		}
		t.Fatalf("summary %+v, want %d ok", sum, len(configs))
	}
	if want := map[browser.Backend]int{browser.BackendRod: 1}[backend]; r.Recycled() != want {
		t.Errorf("%d windows replaced, want %d (recycle after %d dialogues, %d configs)", r.Recycled(), want, rc.Recycle.After, len(configs))
	}
	if heap := r.slots[0].use.heapMiB; heap <= 0 || heap > float64(rc.Recycle.HeapMiB) {
		t.Errorf("window heap read as %.1f MiB, want a reading between 0 and the %d MiB bound", heap, rc.Recycle.HeapMiB)
	}
	// Every selection of the test repo's files is made with a Shift+click,
	// scrolling first where its end is out of view.
	// (workbench's msgSelectByKeyboard, logged when it does)
	if kb := logs.FilterMessageSnippet("extending with the keyboard"); kb.Len() > 0 {
		t.Errorf("%d selections made with the keyboard, want none: %v", kb.Len(), kb.All()[0].ContextMap())
	}
	quillTurns := 0
	for _, c := range configs {
		if c.Plugin == "quill" {
			quillTurns += len(c.Turns)
			t.Run(c.ID, func(t *testing.T) { checkQuill(t, c, records[c.ID]) })
			continue
		}
		t.Run(c.ID, func(t *testing.T) { checkDialogue(t, c, records[c.ID]) })
	}
	t.Run("auxiliary requests are recorded apart", func(t *testing.T) {
		// Quill asks for a title after each answer; the last one may still
		// be on its way.
		deadline := time.Now().Add(30 * time.Second)
		for len(sink.auxiliary()) < quillTurns && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		aux := sink.auxiliary()
		if len(aux) != quillTurns {
			t.Fatalf("%d auxiliary exchanges, want one title request per Quill turn (%d)", len(aux), quillTurns)
		}
		inRecords := 0
		for _, ex := range aux {
			if ex.Auxiliary != "title" || ex.Responder != "stand-in" || ex.Answer != "Untitled" || !strings.Contains(string(ex.Request), quillTitle) {
				t.Errorf("auxiliary exchange: rule %q responder %q answer %q request %s", ex.Auxiliary, ex.Responder, ex.Answer, ex.Request)
			}
		}
		for _, d := range records {
			for _, ex := range d.Auxiliary {
				inRecords++
				if ex.Auxiliary == "" {
					t.Errorf("%s: a chat exchange among the auxiliary ones", d.ConfigID)
				}
			}
		}
		if inRecords == 0 {
			t.Errorf("no dialogue record keeps its auxiliary requests")
		}
	})

	t.Run("failure is recorded with artifacts and the run goes on", func(t *testing.T) {
		bad := configs[2]
		bad.ID, bad.Turns = "responder-fails", []dialog.TurnSpec{{Query: "FAIL-ME please"}}
		good := configs[1]
		good.ID = "after-failure"
		// Attempted twice, as the farm retries a dialogue that may pass.
		sum := mustDriveOnFarm(ctx, t, r, []dialog.ChatConfig{bad, good}, 2)
		if sum.OK != 1 || sum.Failed != 1 {
			t.Fatalf("summary %+v, want 1 ok and 1 failed", sum)
		}
		if len(sum.Attempts) != 1 || sum.Attempts[0].ConfigID != bad.ID || sum.Attempts[0].FailedStep != "turn1_answer" {
			t.Errorf("attempts tried again: %+v, want the first of %s's two", sum.Attempts, bad.ID)
		}
		recs := readRecords(t, sum.Records)
		d := recs["responder-fails"]
		if d.Status != dialog.StatusFailed || d.FailedStep != "turn1_answer" || !strings.Contains(d.Error, "model endpoint is down") {
			t.Fatalf("failed record: status %q step %q error %q", d.Status, d.FailedStep, d.Error)
		}
		for _, f := range []string{"screenshot.png", "steps.json", "dom.html"} {
			info, err := os.Stat(filepath.Join(d.Artifacts, f))
			if err != nil || info.Size() == 0 {
				t.Errorf("artifact %s: %v", f, err)
			}
		}
		dom, _ := os.ReadFile(filepath.Join(d.Artifacts, "dom.html"))
		if !strings.Contains(string(dom), `data-state="error"`) {
			t.Errorf("dom.html does not show the error message")
		}
		if recs["after-failure"].Status != dialog.StatusOK {
			t.Errorf("the config after the failure: %+v", recs["after-failure"].Error)
		}
	})

	t.Run("locked down", func(t *testing.T) { checkLockdown(t, ctx, r, out) })

	// What code-server does is the same whichever backend drives the
	// browser: those checks run once, on the default backend (the suite's
	// time on a 2-core CI machine is the budget).
	editorOnly := func(t *testing.T) {
		if backend != browser.BackendRod {
			t.Skip("the editor's side, the same on every backend: checked with rod")
		}
	}
	t.Run("extension hosts scan for ports to forward only as they start", func(t *testing.T) {
		editorOnly(t)
		if len(group) == 0 && len(scans) == 0 {
			t.Fatal("saw no process start in code-server's group while the dialogues ran")
		}
		for host, n := range scans {
			if n > 1 {
				t.Errorf("process %d (an extension host) ran %d port scans while the dialogues ran, want only the one at its start", host, n)
			}
		}
		t.Logf("port scans by extension host: %v; other processes started: %q", scans, group)
	})
	t.Run("only the built-in extensions an adapter needs are loaded", func(t *testing.T) {
		editorOnly(t)
		checkBuiltinsSkipped(t, filepath.Join(out, "editor", "user-data", "logs"))
		checkNoBuiltinInWebWorker(t, root, filepath.Join(out, "browser", "chromium-profile", "Default", "Cache", "Cache_Data"))
	})
	t.Run("no file is highlighted", func(t *testing.T) {
		editorOnly(t)
		checkNoFileIsHighlighted(t, ctx, r)
	})
	t.Run("a file changed on disk is seen", func(t *testing.T) {
		editorOnly(t)
		checkFileChangesAreSeen(t, ctx, r)
	})
	t.Run("the workbench's log is read from its window", func(t *testing.T) {
		editorOnly(t)
		checkWorkbenchLog(t, ctx, r)
	})
	t.Run("a crashed editor is restarted", func(t *testing.T) {
		editorOnly(t)
		pid := editorPID(r)
		if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		c := configs[0]
		c.ID = "after-crash"
		sum := mustDriveOnFarm(ctx, t, r, []dialog.ChatConfig{c}, 1)
		if newPID := editorPID(r); newPID == pid {
			t.Errorf("code-server was not restarted (pid %d)", pid)
		}
		d := readRecords(t, sum.Records)["after-crash"]
		if sum.OK != 1 || d.Status != dialog.StatusOK {
			t.Fatalf("after a crash: %+v, record %s %s %s", sum, d.Status, d.FailedStep, d.Error)
		}
		checkDialogue(t, c, d)
	})

	t.Run("an editor killed mid-dialogue fails the dialogue at once", func(t *testing.T) {
		editorOnly(t)
		killed := configs[2]
		killed.ID, killed.Turns = "editor-killed", []dialog.TurnSpec{{Query: "KILL-EDITOR now"}}
		after := configs[1]
		after.ID = "after-editor-killed"
		sum := mustDriveOnFarm(ctx, t, r, []dialog.ChatConfig{killed, after}, 1)
		recs := readRecords(t, sum.Records)
		d := recs["editor-killed"]
		// Without the editor watch the answer step waits its whole
		// timeout (a minute here) for a workbench that cannot answer.
		if d.Status != dialog.StatusFailed || !strings.Contains(d.Error, "code-server exited mid-dialogue") || d.Seconds > 30 {
			t.Errorf("killed mid-dialogue: status %q step %q error %q after %.1f s", d.Status, d.FailedStep, d.Error, d.Seconds)
		}
		if a := recs["after-editor-killed"]; a.Status != dialog.StatusOK {
			t.Errorf("the config after the kill: %s %s %s", a.Status, a.FailedStep, a.Error)
		}
	})

	t.Run("a crashed browser is relaunched", func(t *testing.T) {
		_, pid := r.PIDs()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		c := configs[0]
		c.ID = "after-browser-crash"
		sum := mustDriveOnFarm(ctx, t, r, []dialog.ChatConfig{c}, 1)
		if _, newPID := r.PIDs(); newPID == pid {
			t.Errorf("chromium was not relaunched (pid %d)", pid)
		}
		d := readRecords(t, sum.Records)["after-browser-crash"]
		if sum.OK != 1 || d.Status != dialog.StatusOK {
			t.Fatalf("after a browser crash: %+v, record %s %s %s", sum, d.Status, d.FailedStep, d.Error)
		}
		checkDialogue(t, c, d)
	})

	t.Run("a re-run skips configs already recorded ok", func(t *testing.T) {
		sum := mustDriveOnFarm(ctx, t, r, configs, 1)
		if sum.Skipped != len(configs) || sum.OK+sum.Failed != 0 {
			t.Fatalf("re-run summary %+v, want all %d skipped", sum, len(configs))
		}
	})
}

// editorPID is the process group of the editor the Runner's slots share.
func editorPID(r *Runner) int {
	eds, _ := r.PIDs()
	if len(eds) == 0 {
		return 0
	}
	return eds[0]
}

// checkDialogue asserts, from the captured requests, that the plugin sent
// the file, language, cursor and exact selected text the config asked for,
// the previous turn in later turns, and that the view showed the answer the
// capture endpoint sent.
func checkDialogue(t *testing.T, c dialog.ChatConfig, d dialog.Dialogue) {
	t.Helper()
	if d.Status != dialog.StatusOK || len(d.Turns) != len(c.Turns) {
		t.Fatalf("record: status %q, %d turns, error %q", d.Status, len(d.Turns), d.Error)
	}
	if d.Versions.CodeServer == "" || d.Versions.Chromium == "" || d.Versions.Plugin == "" {
		t.Errorf("versions missing: %+v", d.Versions)
	}
	lines := fileLines(t, filepath.Join(testRepo, c.File))
	for i, turn := range d.Turns {
		var body struct {
			Model    string `json:"model"`
			Stream   bool   `json:"stream"`
			Messages []struct {
				Role, Content string
			} `json:"messages"`
		}
		if err := json.Unmarshal(turn.Request, &body); err != nil {
			t.Fatalf("turn %d: request is not JSON: %v", i+1, err)
		}
		if !body.Stream || len(body.Messages) != 2+2*i || body.Messages[0].Role != "system" {
			t.Fatalf("turn %d: stream=%v, %d messages", i+1, body.Stream, len(body.Messages))
		}
		user := body.Messages[len(body.Messages)-1].Content
		want := "File: " + c.File + "\nLanguage: " + c.Language + "\n"
		if !strings.HasPrefix(user, want) {
			t.Errorf("turn %d: user message starts %q, want %q", i+1, clip(user, 80), want)
		}
		cursor := dialog.Position{Line: 1, Col: 1}
		if c.Cursor != nil {
			cursor = *c.Cursor
		}
		if c.Selection != nil {
			cursor = c.Selection.End // selections are made from start to end
		}
		if w := "Cursor: line " + itoa(cursor.Line) + ", column " + itoa(cursor.Col) + "\n"; !strings.Contains(user, w) {
			t.Errorf("turn %d: user message lacks %q:\n%s", i+1, w, user)
		}
		if s := c.Selection; s != nil {
			text := rangeText(lines, *s)
			if w := "```" + c.Language + "\n" + text + "\n```\n"; !strings.Contains(user, w) {
				t.Errorf("turn %d: selected text not sent exactly; want block %q in:\n%s", i+1, w, user)
			}
		} else if !strings.Contains(user, "Code around the cursor") || !strings.Contains(user, lines[cursor.Line-1]) {
			t.Errorf("turn %d: no code around the cursor in:\n%s", i+1, user)
		}
		q := c.Turns[i].Query
		switch {
		case c.Instruction == dialog.InstructionFreeText || i > 0:
			if !strings.HasSuffix(user, "\n\n"+q) {
				t.Errorf("turn %d: user message does not end with the query %q", i+1, q)
			}
		default: // slash command or command: expanded to the plugin's template
			if strings.Contains(user, "\n\n"+strings.Fields(q)[0]) {
				t.Errorf("turn %d: slash command %q was not expanded:\n%s", i+1, q, user)
			}
			if rest := strings.TrimSpace(strings.TrimPrefix(q, strings.Fields(q)[0])); rest != "" && !strings.HasSuffix(user, "\n"+rest) {
				t.Errorf("turn %d: %q lost its text after the command", i+1, q)
			}
		}
		if i > 0 {
			prev := d.Turns[i-1]
			var prevBody struct {
				Messages []struct{ Role, Content string }
			}
			_ = json.Unmarshal(prev.Request, &prevBody)
			gotUser, gotAnswer := body.Messages[len(body.Messages)-3], body.Messages[len(body.Messages)-2]
			if gotUser.Role != "user" || gotUser.Content != prevBody.Messages[len(prevBody.Messages)-1].Content {
				t.Errorf("turn %d: previous user message not in history", i+1)
			}
			if gotAnswer.Role != "assistant" || gotAnswer.Content != prev.Answer {
				t.Errorf("turn %d: previous answer not in history: %q", i+1, gotAnswer.Content)
			}
		}
		if turn.Answer == "" || turn.Shown != turn.Answer {
			t.Errorf("turn %d: view showed %q, endpoint sent %q", i+1, turn.Shown, turn.Answer)
		}
		if turn.Responder != "openai" || turn.Model != "e2e-model" {
			t.Errorf("turn %d: responder %q model %q", i+1, turn.Responder, turn.Model)
		}
	}
}

func readRecords(t *testing.T, path string) map[string]dialog.Dialogue {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]dialog.Dialogue{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d dialog.Dialogue
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, dup := out[d.ConfigID]; dup {
			t.Errorf("%s: config %s recorded twice", path, d.ConfigID)
		}
		out[d.ConfigID] = d
	}
	return out
}

// listenCapture starts a capture endpoint that the test shuts down.
func listenCapture(ctx context.Context, t *testing.T, cc capture.Config, responder capture.Responder, sink capture.Sink, log *zap.Logger) *capture.Server {
	t.Helper()
	srv, err := capture.Listen(ctx, cc, responder, sink, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}

// pluginVersion is the reference plugin's id@version, as a run records it.
func pluginVersion(t *testing.T, root string) string {
	t.Helper()
	manifest, err := editor.ReadPluginManifest(filepath.Join(root, "plugin"))
	if err != nil {
		t.Fatal(err)
	}
	return manifest.ID() + "@" + manifest.Version
}

// oneModel answers through the model gateway with one model (a pool of
// one, judged by the rules), as `--responder openai` does.
func oneModel(tb testing.TB, url, model string, log *zap.Logger) *respond.Responder {
	tb.Helper()
	cfg := pool.DefaultConfig()
	m := pool.DefaultMemberConfig()
	m.Name, m.BaseURL, m.Model = "openai", url, model
	cfg.Members, cfg.CacheDir = []pool.MemberConfig{m}, ""
	p, err := pool.New(cfg, log)
	if err != nil {
		tb.Fatal(err)
	}
	j, err := judge.New(judge.DefaultConfig(), nil, log)
	if err != nil {
		tb.Fatal(err)
	}
	r := respond.New(p, j, log)
	r.Name = "openai"
	return r
}
