package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"dialogfarm/internal/llmtest"
)

// TestRunKeepsSecretsOut runs the built binary over redact's planted-secret
// corpus with the real editor and a pool + judge on the fake model, and
// looks for every planted value everywhere the run wrote or sent: every
// file under the run folder (records, exchanges, SFT, report, logs, the
// editor's folders, saved DOM and artifacts), the command's output and
// every request the fake model received. It also checks that the report
// counts exactly the planted secrets and that the SFT user messages are
// the captured requests' byte for byte.
func TestRunKeepsSecretsOut(t *testing.T) {
	root := editorRoot(t)
	var planted []struct{ Kind, Value string }
	data, err := os.ReadFile(filepath.Join(root, "redact", "testdata", "planted.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &planted); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	model := llmtest.New(t, runAnswer)
	cfgPath := twoCoderConfig(t, tmp, model.URL)
	out := filepath.Join(tmp, "run")
	cmd := exec.Command(bin, "run", "--root", root, "--config", cfgPath, "--profile", "default",
		"--repos", filepath.Join(root, "redact", "testdata", "corpus"), "--n", "4", "--seed", "11", "--out", out, "--context-lines", "3")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}

	// Where to look, and what for: each line of a planted value (a PEM
	// body is looked for line by line, as JSON escapes its newlines).
	places := map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()}
	for _, r := range model.Requests() {
		places["request "+r.Model+" #"+strconv.Itoa(r.Seq)] = r.Body
	}
	files := 0
	err = filepath.WalkDir(out, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		places[path], files = data, files+1
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, p := range planted {
		for _, probe := range strings.Split(p.Value, "\n") {
			probe = strings.TrimSpace(strings.TrimSuffix(probe, `\n`))
			if len(probe) < 12 {
				continue
			}
			for where, data := range places {
				if bytes.Contains(data, []byte(probe)) {
					found++
					t.Errorf("planted %s found in %s", p.Kind, where)
				}
			}
		}
	}
	if len(model.Requests()) == 0 {
		t.Fatal("the fake model received no request")
	}

	// The report counts what was planted, and the net had nothing to drop.
	var report struct {
		Secrets struct {
			Redacted   int            `json:"redacted"`
			PerRule    map[string]int `json:"redacted_per_rule"`
			NetDropped int            `json:"net_dropped"`
		} `json:"secrets"`
	}
	readJSON(t, filepath.Join(out, "report.json"), &report)
	if report.Secrets.Redacted != len(planted) {
		t.Errorf("report: %d secrets redacted, %d planted (%v)", report.Secrets.Redacted, len(planted), report.Secrets.PerRule)
	}
	if report.Secrets.NetDropped != 0 {
		t.Errorf("the export's net dropped %d samples: a secret got past the redaction", report.Secrets.NetDropped)
	}
	if !strings.Contains(stdout.String(), "secrets redacted: "+strconv.Itoa(len(planted))) {
		t.Errorf("run did not print the redaction counts:\n%s", stdout.String())
	}
	t.Logf("%d files, %d model requests searched; %d planted values found; report: %d redacted %v",
		files, len(model.Requests()), found, report.Secrets.Redacted, report.Secrets.PerRule)
	sftUserMessagesAreCaptured(t, out)
	contextLinesHonoured(t, model.Requests(), 3)
}

// contextLinesHonoured checks that the plugin sent at most n lines before
// and after the cursor (run --context-lines n) whenever nothing was
// selected.
func contextLinesHonoured(t *testing.T, reqs []llmtest.Request, n int) {
	t.Helper()
	re := regexp.MustCompile(`Cursor: line (\d+), column \d+\nCode around the cursor \(lines (\d+)-(\d+)\)`)
	checked := 0
	for _, r := range reqs {
		for _, m := range r.Messages {
			for _, g := range re.FindAllStringSubmatch(m.Content, -1) {
				cur, from, to := atoi(g[1]), atoi(g[2]), atoi(g[3])
				checked++
				if from < cur-n || to > cur+n {
					t.Errorf("cursor on line %d, the plugin sent lines %d-%d with --context-lines %d", cur, from, to, n)
				}
			}
		}
	}
	t.Logf("context lines checked in %d messages", checked)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// sftUserMessagesAreCaptured checks every SFT user message is a user
// message of a captured request, byte for byte.
func sftUserMessagesAreCaptured(t *testing.T, out string) {
	t.Helper()
	var exchanges []struct {
		Request json.RawMessage `json:"request"`
	}
	readJSONL(t, filepath.Join(out, "exchanges.jsonl"), &exchanges)
	sent := map[string]bool{}
	for _, ex := range exchanges {
		var req struct {
			Messages []struct{ Role, Content string }
		}
		if err := json.Unmarshal(ex.Request, &req); err != nil {
			t.Fatal(err)
		}
		for _, m := range req.Messages {
			sent[m.Content] = true
		}
	}
	var records []struct {
		Messages []struct{ Role, Content string }
	}
	readJSONL(t, filepath.Join(out, "sft.jsonl"), &records)
	if len(records) == 0 {
		t.Fatal("no SFT record")
	}
	for i, r := range records {
		for _, m := range r.Messages {
			if m.Role == "user" && !sent[m.Content] {
				t.Errorf("sft record %d: a user message differs from what the plugin sent", i+1)
			}
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
