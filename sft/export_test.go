package sft

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dialogfarm/dialog"
	"dialogfarm/internal/golden"
)

func TestExportGolden(t *testing.T) {
	in := writeFixture(t, t.TempDir())
	for _, c := range []struct{ format, meta string }{
		{FormatOpenAI, MetaNone}, {FormatOpenAI, MetaInline}, {FormatOpenAI, MetaSidecar},
		{FormatShareGPT, MetaInline}, {FormatShareGPT, MetaNone},
	} {
		name := c.format + "_" + c.meta
		t.Run(name, func(t *testing.T) {
			opt := DefaultOptions()
			opt.Format, opt.Meta = c.format, c.meta
			out := filepath.Join(t.TempDir(), "sft.jsonl")
			if _, err := ExportFiles(t.Context(), in, out, opt); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(out)
			golden.Check(t, filepath.Join("testdata", name+".jsonl"), got)
			meta, err := os.ReadFile(SidecarPath(out))
			if c.meta == MetaSidecar {
				golden.Check(t, filepath.Join("testdata", name+".meta.jsonl"), meta)
			} else if err == nil {
				t.Errorf("a sidecar was written with --meta %s", c.meta)
			}
		})
	}
}

func TestExportSummary(t *testing.T) {
	var d bytes.Buffer
	for _, x := range fixture(t) {
		_ = writeJSONLine(&d, x)
	}
	var out, meta bytes.Buffer
	sum, err := Export(&d, &out, &meta, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{SkipSuperseded: 1, SkipBelowMin: 2, SkipOffline: 1, SkipFailed: 1, SkipError: 1}
	if !maps.Equal(sum.Skipped, want) {
		t.Errorf("skipped %v, want %v", sum.Skipped, want)
	}
	// d01 (2 of 3 turns), d02, d06 (the later line), d07 (cut to 1 turn), d08.
	if sum.Dialogues != 11 || sum.Records != 5 || sum.Turns != 6 || sum.HistoryCuts != 1 {
		t.Errorf("summary %+v", sum)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(meta.String()), "\n") {
		var m struct {
			Line int `json:"line"`
			Metadata
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
		if m.ID == "d08-rejudged" && (m.Turns[0].Member != "a" || m.Turns[0].Score != 5) {
			t.Errorf("d08: the shown answer's verdict must be used: %+v", m.Turns[0])
		}
		if m.ID == "d06-dup" && m.Turns[0].Score != 5 {
			t.Errorf("d06: the later line must win: %+v", m.Turns[0])
		}
	}
	if want := []string{"d01-multi", "d02-zh", "d06-dup", "d07-cut", "d08-rejudged"}; !slices.Equal(ids, want) {
		t.Errorf("ids %v, want %v (sorted, each once)", ids, want)
	}
}

// TestExportProvenance: the keep rate counts the latest record of each of
// the 10 config ids and their 13 turns; the provenance, the 5 records
// written and how each kept answer was judged.
func TestExportProvenance(t *testing.T) {
	var d bytes.Buffer
	for _, x := range fixture(t) {
		_ = writeJSONLine(&d, x)
	}
	var out, meta bytes.Buffer
	sum, err := Export(&d, &out, &meta, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	wantKeep := dialog.KeepRate{Turns: 13, KeptTurns: 6, TurnRate: 0.4615, Dialogues: 10, KeptDialogues: 5, DialogueRate: 0.5}
	if sum.Keep != wantKeep {
		t.Errorf("keep %+v, want %+v", sum.Keep, wantKeep)
	}
	p := sum.Provenance
	if p.Dialogues != 5 || p.Turns != 6 || p.OfflineDialogues != 0 || p.OfflineTurns != 0 {
		t.Errorf("provenance counts %+v", p)
	}
	for name, c := range map[string]struct{ got, want map[string]int }{
		"judge modes":   {p.JudgeModes, map[string]int{dialog.JudgeLLM: 4, dialog.JudgeRulesOnly: 1, dialog.JudgeError: 1}},
		"judge models":  {p.JudgeModels, map[string]int{"judge-model": 4}},
		"query sources": {p.QuerySources, map[string]int{dialog.QuerySourceLLM: 1, dialog.QuerySourceTemplate: 4}},
		"answer models": {p.AnswerModels, map[string]int{"model-a": 6}},
		"pool models":   {p.PoolModels, map[string]int{"model-a": 6, "model-b": 6}},
	} {
		if !maps.Equal(c.got, c.want) {
			t.Errorf("%s %v, want %v", name, c.got, c.want)
		}
	}
	if p.LLMJudged() {
		t.Error("two kept turns were scored by the rules alone, yet LLMJudged is true")
	}
	// With the offline record exported, it is counted as such.
	d.Reset()
	for _, x := range fixture(t) {
		_ = writeJSONLine(&d, x)
	}
	opt := DefaultOptions()
	opt.AllowOffline, opt.MinScore = true, 0
	if sum, err = Export(&d, &out, &meta, opt); err != nil {
		t.Fatal(err)
	}
	if p := sum.Provenance; p.OfflineDialogues != 1 || p.OfflineTurns != 1 || p.JudgeModes[dialog.JudgeNone] != 1 {
		t.Errorf("with the offline record: %+v", p)
	}
}

// TestUserMessagesExact checks that every message of a record is exactly
// what the plugin sent (or the answer it was shown), and that the records
// stay loadable by OpenAI fine-tuning: only "messages", each with only a
// role and a content, ending with the assistant.
func TestUserMessagesExact(t *testing.T) {
	var d bytes.Buffer
	fx := fixture(t)
	for _, x := range fx {
		_ = writeJSONLine(&d, x)
	}
	var out bytes.Buffer
	opt := DefaultOptions()
	opt.Meta = MetaNone
	if _, err := Export(&d, &out, nil, opt); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var multi []dialog.Message
	for _, line := range lines {
		var raw map[string][]map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil || len(raw) != 1 || raw["messages"] == nil {
			t.Fatalf("not a plain OpenAI record: %s (%v)", line, err)
		}
		msgs := raw["messages"]
		for _, m := range msgs {
			if len(m) != 2 || m["role"] == nil || m["content"] == nil {
				t.Errorf("message with other keys: %v", m)
			}
		}
		if msgs[len(msgs)-1]["role"] != "assistant" || msgs[0]["role"] != "system" {
			t.Errorf("record does not run system … assistant: %s", line)
		}
		if strings.Contains(line, "What does this do?") {
			var rec openaiRecord
			_ = json.Unmarshal([]byte(line), &rec)
			multi = rec.Messages
		}
	}
	d01 := fx[1]
	req1, _ := dialog.ParseChatRequest(d01.Turns[0].Request)
	req2, _ := dialog.ParseChatRequest(d01.Turns[1].Request)
	want := append(slices.Clone(req2.Messages), dialog.Message{Role: "assistant", Content: d01.Turns[1].Answer})
	if !slices.Equal(multi, want) {
		t.Fatalf("d01 record:\n%v\nwant the second request as sent plus its answer:\n%v", multi, want)
	}
	if multi[0].Content != systemPrompt || multi[1] != req1.Messages[1] || multi[2].Content != d01.Turns[0].Answer {
		t.Errorf("d01: system prompt, first user message or first answer not as sent")
	}
	if !strings.Contains(out.String(), "x < 10 && x > 0") {
		t.Error("code characters were escaped")
	}
}

func TestExportIdempotent(t *testing.T) {
	dir := t.TempDir()
	in := writeFixture(t, dir)
	out := filepath.Join(dir, "sft.jsonl")
	opt := DefaultOptions()
	opt.Meta = MetaSidecar
	var first [2][]byte
	for i := range 3 {
		if _, err := ExportFiles(t.Context(), in, out, opt); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(out)
		b, _ := os.ReadFile(SidecarPath(out))
		if i == 0 {
			first = [2][]byte{a, b}
		} else if !bytes.Equal(a, first[0]) || !bytes.Equal(b, first[1]) {
			t.Fatalf("export %d differs from the first", i+1)
		}
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("output mode %v, %v", fi.Mode(), err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestMinScoreAndOffline(t *testing.T) {
	var d bytes.Buffer
	for _, x := range fixture(t) {
		_ = writeJSONLine(&d, x)
	}
	input := d.Bytes()
	cases := []struct {
		name      string
		opt       Options
		records   int
		turns     int
		offline   int
		hasRecord string
	}{
		{"min 4 keeps the 4-point turn", Options{Format: FormatOpenAI, Meta: MetaInline, MinScore: 4}, 6, 7, 1, "Use int64."},
		{"min 3 keeps all of d01", Options{Format: FormatOpenAI, Meta: MetaInline, MinScore: 3}, 6, 8, 1, "Use generics."},
		{"offline refused even at min 0", Options{Format: FormatOpenAI, Meta: MetaInline, MinScore: 0}, 7, 9, 1, "Sums."},
		{"offline allowed", Options{Format: FormatOpenAI, Meta: MetaInline, MinScore: 0, AllowOffline: true}, 8, 10, 0, "[offline placeholder]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			sum, err := Export(bytes.NewReader(input), &out, nil, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Records != c.records || sum.Turns != c.turns || sum.Skipped[SkipOffline] != c.offline || !strings.Contains(out.String(), c.hasRecord) {
				t.Errorf("summary %+v; output has %q: %v", sum, c.hasRecord, strings.Contains(out.String(), c.hasRecord))
			}
		})
	}
}

func TestExportErrors(t *testing.T) {
	cases := []struct {
		name, input string
		opt         Options
		want        string
	}{
		{"bad format", "", Options{Format: "alpaca", Meta: MetaNone}, "alpaca"},
		{"bad meta", "", Options{Format: FormatOpenAI, Meta: "header"}, "header"},
		{"bad json", "{\"config_id\":\"a\"}\n{not json\n", DefaultOptions(), "dialogues:2: "},
		{"no id", "{\"status\":\"ok\"}\n", DefaultOptions(), "no config_id"},
		{"sidecar missing", "", Options{Format: FormatOpenAI, Meta: MetaSidecar}, "sidecar"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			var side io.Writer = &bytes.Buffer{}
			if c.name == "sidecar missing" {
				side = nil
			}
			_, err := Export(strings.NewReader(c.input), &out, side, c.opt)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}
