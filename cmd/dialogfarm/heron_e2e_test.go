package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
	"dialogfarm/internal/vsix"
)

// Heron, the third test plugin (internal/testdata/heron), onboarded as a
// new user would: `adapters probe --write-adapter` on its .vsix, with its
// endpoint described as the providers file it reads from its global
// storage; the draft it writes (golden: internal/testdata/heron/draft.yaml)
// validates; the adapter made from it by hand (adapter.yaml beside it)
// drives configs end to end with an editor per simulator, 2 simulators,
// through `drive` as a user runs it. The probe drives Heron's view with
// go-rod (the default backend), the drive with chromedp: this is the
// suite's run of chromedp with an editor per simulator, while
// driver.TestEditorPerSimulator runs go-rod with one.

const heronSystem = "You are Heron, a careful pair programmer. Answer in Markdown; put code in fenced blocks."

// heronFolder packs Heron into heron.vsix in a new folder, beside a copy
// of its adapter and of its providers file.
func heronFolder(t *testing.T, root string) string {
	t.Helper()
	dir := shortTempDir(t, "dialogfarm-heron-")
	src := filepath.Join(root, "internal", "testdata", "heron")
	if err := vsix.Pack(filepath.Join(src, "extension"), filepath.Join(dir, "heron.vsix")); err != nil {
		t.Fatal(err)
	}
	// providers.json is the providers file a Heron user points at
	// dialogfarm: one record, its endpoint split into fields.
	for _, name := range []string{"adapter.yaml", "providers.json"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestHeronOnboarded(t *testing.T) {
	root := editorRoot(t)
	dir := heronFolder(t, root)
	bin := buildBinary(t, dir)
	t.Run("probe", func(t *testing.T) {
		draft := filepath.Join(dir, "draft.yaml")
		cmd := exec.Command(bin, "adapters", "probe", "--root", root, "--out", filepath.Join(dir, "probe"),
			"--extension", filepath.Join(dir, "heron.vsix"),
			"--file", "User/globalStorage/{{extension_id}}/heron-providers.json=@"+filepath.Join(dir, "providers.json"),
			"--write-adapter", draft)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("probe: %v\n%s", err, out)
		}
		t.Logf("%s", out)
		got, err := os.ReadFile(draft)
		if err != nil {
			t.Fatal(err)
		}
		// The draft as the probe wrote it is kept beside Heron's adapter
		// (-update rewrites it, as the docs' flag tables).
		path := filepath.Join(root, "internal", "testdata", "heron", "draft.yaml")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if want, err := os.ReadFile(path); err != nil || string(want) != string(got) {
			t.Errorf("the draft differs from %s (go test -run TestHeronOnboarded -update, and review the diff): %v\n%s", path, err, got)
		}
		if out, err := exec.Command(bin, "adapters", "validate", "--root", root, "--live=false", draft).CombinedOutput(); err != nil {
			t.Errorf("adapters validate the draft: %v\n%s", err, out)
		}
	})
	configs := heronConfigs(t, root, dir, 4)
	t.Run("drive-chromedp", func(t *testing.T) { driveHeron(t, bin, root, dir, configs, "chromedp") })
}

// heronConfigs writes the first n of Heron's configs with their repository
// made absolute, and returns their file.
func heronConfigs(t *testing.T, root, dir string, n int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "internal", "testdata", "heron", "configs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(data)), "\n")
	out := strings.ReplaceAll(strings.Join(lines[:n], ""), `"repo":"examples/`, `"repo":"`+root+`/examples/`) + "\n"
	path := filepath.Join(dir, "configs.jsonl")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// heronAnswer is markdown, with code, that Heron renders.
func heronAnswer(r llmtest.Request) llmtest.Reply {
	return llmtest.Reply{Text: "Answer to «" + r.LastUser()[:min(len(r.LastUser()), 30)] + "»:\n\n**Bold** and `a < b`\n\n```python\nif a < b && c > d:\n    return \"<ok>\"\n```\n"}
}

func driveHeron(t *testing.T, bin, root, dir, configs, backend string) {
	model := llmtest.New(t, heronAnswer)
	out := filepath.Join(dir, "run-"+backend)
	cmd := exec.Command(bin, "drive", "--root", root, "--configs", configs, "--out", out, "--browser", backend,
		"--adapter", filepath.Join(dir, "adapter.yaml"), "--sessions", "2", "--answer-timeout", "2m",
		"--responder", "openai", "--model-base-url", model.URL, "--model", "coder")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("drive: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var cfgs []dialog.ChatConfig
	data, err := os.ReadFile(configs)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c dialog.ChatConfig
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, c)
	}
	recs := map[string]dialog.Dialogue{}
	data, err = os.ReadFile(filepath.Join(out, "dialogues.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d dialog.Dialogue
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		recs[d.ConfigID] = d
	}
	sessions := map[string]bool{}
	for _, c := range cfgs {
		d, ok := recs[c.ID]
		if !ok || d.Status != dialog.StatusOK {
			t.Errorf("%s: %s %s %s", c.ID, d.Status, d.FailedStep, d.Error)
			continue
		}
		sessions[d.Session] = true
		checkHeron(t, c, d)
	}
	if len(sessions) != 2 {
		t.Errorf("the dialogues were driven by %d simulators, want 2", len(sessions))
	}
	// The title request after each answer is auxiliary: in exchanges, never a turn.
	ex, err := os.ReadFile(filepath.Join(out, "exchanges.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(ex), `"auxiliary":"title"`); n < len(cfgs) {
		t.Errorf("%d title requests recorded as auxiliary, want one per answer at least (%d)", n, len(cfgs))
	}
}

// checkHeron asserts from the captured requests Heron's own format: its
// system prompt; the user content as parts, the query then, when code is
// selected, the selection and nothing else of the editor; turn 1 replayed
// in turn 2; and the view showing the answer rendered from markdown.
func checkHeron(t *testing.T, c dialog.ChatConfig, d dialog.Dialogue) {
	t.Helper()
	var sel string
	if c.Selection != nil {
		data, err := os.ReadFile(filepath.Join(c.Repo, c.File))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		var parts []string
		for l := c.Selection.Start.Line; l <= c.Selection.End.Line; l++ {
			r := []rune(lines[l-1])
			from, to := 0, len(r)
			if l == c.Selection.Start.Line {
				from = c.Selection.Start.Col - 1
			}
			if l == c.Selection.End.Line {
				to = min(c.Selection.End.Col-1, len(r))
			}
			parts = append(parts, string(r[from:to]))
		}
		sel = strings.Join(parts, "\n")
	}
	var prev []json.RawMessage
	for i, turn := range d.Turns {
		var body struct {
			Stream   bool              `json:"stream"`
			Model    string            `json:"model"`
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(turn.Request, &body); err != nil {
			t.Fatalf("%s turn %d: %v", c.ID, i+1, err)
		}
		var sys struct{ Role, Content string }
		if len(body.Messages) > 0 {
			if err := json.Unmarshal(body.Messages[0], &sys); err != nil {
				t.Errorf("%s turn %d: first message %s: %v", c.ID, i+1, body.Messages[0], err)
			}
		}
		if !body.Stream || body.Model != "heron-model" || len(body.Messages) != 2+2*i || sys.Role != "system" || sys.Content != heronSystem {
			t.Errorf("%s turn %d: stream %v, model %q, %d messages, first %+v", c.ID, i+1, body.Stream, body.Model, len(body.Messages), sys)
			continue
		}
		var user struct {
			Role    string
			Content []struct{ Type, Text string }
		}
		if err := json.Unmarshal(body.Messages[len(body.Messages)-1], &user); err != nil || user.Role != "user" {
			t.Errorf("%s turn %d: last message %s", c.ID, i+1, body.Messages[len(body.Messages)-1])
			continue
		}
		want := []string{c.Turns[i].Query}
		if sel != "" {
			want = append(want, "\n\nSelected code:\n```\n"+sel+"\n```")
		}
		var got []string
		for _, p := range user.Content {
			if p.Type != "text" {
				t.Errorf("%s turn %d: a %q part", c.ID, i+1, p.Type)
			}
			got = append(got, p.Text)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("%s turn %d: user parts %q, want %q", c.ID, i+1, got, want)
		}
		for k, m := range prev {
			if !bytes.Equal(body.Messages[1+k], m) {
				t.Errorf("%s turn %d: message %d is %s, turn %d sent %s", c.ID, i+1, 1+k, body.Messages[1+k], i, m)
			}
		}
		prev = body.Messages[1:]
		if turn.Shown == "" || strings.Contains(turn.Shown, "```") || !strings.Contains(turn.Shown, `return "<ok>"`) {
			t.Errorf("%s turn %d: the view shows %q, want the answer rendered from markdown", c.ID, i+1, turn.Shown)
		}
	}
}
