package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"dialogfarm/dialog"
)

// buildFrom builds a dataset folder from ds with opt and returns its
// stats, its card's front-matter and the card's text.
func buildFrom(tb testing.TB, ds []dialog.Dialogue, opt Options) (Stats, map[string]any, string, error) {
	tb.Helper()
	var in bytes.Buffer
	for _, d := range ds {
		if err := json.NewEncoder(&in).Encode(d); err != nil {
			tb.Fatal(err)
		}
	}
	dir := filepath.Join(tb.TempDir(), "ds")
	st, err := Build(context.Background(), &in, dir, opt)
	if err != nil {
		return st, nil, "", err
	}
	data, rerr := os.ReadFile(filepath.Join(dir, CardFile))
	if rerr != nil {
		tb.Fatal(rerr)
	}
	front, _, _ := strings.Cut(strings.TrimPrefix(string(data), "---\n"), "\n---\n")
	var meta map[string]any
	if err := yaml.Unmarshal([]byte(front), &meta); err != nil {
		tb.Fatalf("front-matter: %v", err)
	}
	return st, meta, string(data), nil
}

// offlineDialogues are n dialogues answered by the offline stand-in and
// judged by the rules alone, as make demo records them.
func offlineDialogues(tb testing.TB, n int) []dialog.Dialogue {
	tb.Helper()
	var out []dialog.Dialogue
	for i := range n {
		answer := fmt.Sprintf("[offline placeholder] You asked about step%d. No model service is configured, so this is never training data.", i)
		d := planted(tb, fmt.Sprintf("demo-%03d", i), "explain", "go", "en", ask(fmt.Sprintf("What does step%d do?", i)), answer)
		d.Offline, d.Turns[0].Offline, d.Turns[0].Responder, d.Turns[0].Model = true, true, "offline", "offline"
		d.Config.QuerySource = dialog.QuerySourceTemplate
		d.Turns[0].Candidates[0].Member, d.Turns[0].Candidates[0].Model, d.Turns[0].Candidates[0].Offline = "offline", "offline", true
		v := &d.Turns[0].Verdicts[0]
		v.LLMScore, v.JudgeModel, v.RulesOnly = 0, "", true
		out = append(out, d)
	}
	return out
}

// TestOfflineBanner: a folder of the offline stand-in's answers says so
// first, counts them, and never says a judge scored them.
func TestOfflineBanner(t *testing.T) {
	opt := DefaultOptions()
	opt.Export.AllowOffline, opt.Dedup.Near = true, 0
	st, meta, text, err := buildFrom(t, offlineDialogues(t, 12), opt)
	if err != nil {
		t.Fatal(err)
	}
	if p := st.Provenance; p.OfflineDialogues != 12 || p.OfflineTurns != 12 || p.JudgeModes[dialog.JudgeRulesOnly] != 12 ||
		p.QuerySources[dialog.QuerySourceTemplate] != 12 || p.AnswerModels["offline"] != 12 {
		t.Errorf("provenance %+v", p)
	}
	banner := "> **Not training data: 12 of 12 records (12 of 12 assistant turns) hold placeholder answers from the offline stand-in.**"
	_, body, _ := strings.Cut(text, "\n---\n")
	if !strings.HasPrefix(strings.TrimSpace(strings.SplitN(body, "\n\n", 3)[1]), banner) {
		t.Errorf("the card does not open with the offline banner:\n%s", body)
	}
	if strings.Contains(text, "Every assistant message is an answer a judge model") || !strings.Contains(text, "12 scored by the judge's rules alone") {
		t.Errorf("the card must say the rules alone scored the answers:\n%s", body)
	}
	if !slices.ContainsFunc(st.Warnings, func(w string) bool { return strings.Contains(w, dialog.OfflineWarning) }) {
		t.Errorf("warnings %q name no offline placeholders", st.Warnings)
	}
	df := meta["dialogfarm"].(map[string]any)
	if prov := df["provenance"].(map[string]any); fmt.Sprint(prov["offline_dialogues"]) != "12" {
		t.Errorf("front-matter provenance %v", prov)
	}
}

// TestJudgeModelSentence: only when a judge model scored every kept
// answer does the card say so.
func TestJudgeModelSentence(t *testing.T) {
	ds := splitDialogues(t, 1, 12) // none scored 3 (ids 1..12 but 3, 6, 9, 12)
	for i := range ds {
		ds[i].Turns[0].Verdicts[0].JudgeModel = "judge-x"
	}
	_, _, text, err := buildFrom(t, ds, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Every assistant message is an answer a judge model (judge-x) scored at least 5.") || strings.Contains(text, "Not training data") {
		t.Errorf("card:\n%s", text)
	}
}

// TestLanguagesFromText: the card's languages are those the kept records'
// messages hold, not the locales their configs asked for. A config asked
// in Chinese whose kept turn is the plugin's English command template
// gives no zh (it did with the configs' locales).
func TestLanguagesFromText(t *testing.T) {
	zhConfig := planted(t, "c01-zh-asked", "explain", "go", "zh-CN", ask("Explain the selected code, step by step, in plain words."),
		"It walks the list once and returns the running total of the items.")
	zhText := planted(t, "c02-zh-text", "explain", "go", "zh", ask("这个函数在空切片上返回什么？请解释原因。"), "它返回 0，因为循环一次也不执行。")
	deText := planted(t, "c03-de-text", "explain", "go", "en", ask("Was macht diese Funktion mit einer leeren Liste?"), "Sie gibt 0 zurück, weil die Schleife nie läuft.")
	opt := DefaultOptions()
	st, meta, _, err := buildFrom(t, []dialog.Dialogue{zhConfig}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(meta["language"]); got != "[en]" {
		t.Errorf("language %s, want [en]: the record holds no Chinese (locales %v)", got, st.Locales)
	}
	st, meta, _, err = buildFrom(t, []dialog.Dialogue{zhConfig, zhText, deText}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(meta["language"]); got != "[de en zh]" {
		t.Errorf("language %s, want [de en zh] (locales %v)", got, st.Locales)
	}
	if st.Locales["zh"] != 1 || st.Locales["de"] != 1 || st.Locales["en"] != 1 {
		t.Errorf("locales %v, want en 1, zh 1, de 1", st.Locales)
	}
}

// TestSplitMinimumWarning: fewer than 10 train records in the OpenAI
// format is a warning (OpenAI fine-tuning refuses them); 10 or more is not.
func TestSplitMinimumWarning(t *testing.T) {
	opt := DefaultOptions()
	opt.Split = 1
	for _, c := range []struct {
		n    int
		want bool
	}{{6, true}, {15, false}} {
		ds := splitDialogues(t, 1, c.n*3/2+1)
		for i := range ds {
			ds[i].Turns[0].Verdicts[0].Score = 5
		}
		st, meta, text, err := buildFrom(t, ds[:c.n], opt)
		if err != nil {
			t.Fatal(err)
		}
		warned := slices.ContainsFunc(st.Warnings, func(w string) bool { return strings.Contains(w, "OpenAI fine-tuning needs at least 10") })
		if warned != c.want || strings.Contains(text, "OpenAI fine-tuning needs at least 10") != c.want ||
			strings.Contains(fmt.Sprint(meta["dialogfarm"]), "OpenAI fine-tuning needs") != c.want {
			t.Errorf("%d train records: warned %v (stats %q), want %v", st.Splits[SplitTrain], warned, st.Warnings, c.want)
		}
	}
}

// TestEmptyExport: no record is an error that says why, and writes
// nothing; with AllowEmpty the folder's card says it is empty and lists
// no data files to load.
func TestEmptyExport(t *testing.T) {
	ds := offlineDialogues(t, 3) // refused: offline
	dir := filepath.Join(t.TempDir(), "ds")
	var in bytes.Buffer
	for _, d := range ds {
		_ = json.NewEncoder(&in).Encode(d)
	}
	st, err := Build(context.Background(), bytes.NewReader(in.Bytes()), dir, DefaultOptions())
	if !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), "offline 3") {
		t.Fatalf("error %v, want ErrEmpty naming offline 3", err)
	}
	if st.Skipped["offline"] != 3 {
		t.Errorf("stats %+v", st)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("an empty export wrote %s", dir)
	}
	opt := DefaultOptions()
	opt.AllowEmpty = true
	if _, err := Build(context.Background(), bytes.NewReader(in.Bytes()), dir, opt); err != nil {
		t.Fatal(err)
	}
	card, _ := os.ReadFile(filepath.Join(dir, CardFile))
	for _, bad := range []string{"data_files", "configs:", "Load it", "load_dataset"} {
		if strings.Contains(string(card), bad) {
			t.Errorf("the empty folder's card holds %q:\n%s", bad, card)
		}
	}
	if !strings.Contains(string(card), "This folder holds no record") {
		t.Errorf("the empty folder's card does not say it is empty:\n%s", card)
	}
	for _, f := range []string{InfoFile, TrainFile, ValidationFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("the empty folder holds %s", f)
		}
	}
}

func TestLicense(t *testing.T) {
	for _, c := range []struct {
		in      License
		want    string // the id written, or "" for an error
		errText string
	}{
		{License{ID: "unknown"}, "unknown", ""},
		{License{ID: "MIT"}, "mit", ""},
		{License{ID: "Apache-2.0"}, "apache-2.0", ""},
		{License{ID: "other", Name: "acme-data-1.0", Link: "https://acme.example/data-license"}, "other", ""},
		{License{ID: "other"}, "", "needs a license name and a link"},
		{License{ID: "other", Name: "acme-data-1.0"}, "", "needs a license name and a link"},
		{License{ID: "MIT-0"}, "", `"MIT-0" is not a Hugging Face Hub license id`},
		{License{ID: "mit", Link: "https://x.example"}, "", "only for license other"},
	} {
		l := c.in
		err := l.Check()
		if c.want == "" {
			if !errors.Is(err, ErrLicense) || !strings.Contains(err.Error(), c.errText) {
				t.Errorf("%+v: error %v, want one with %q", c.in, err, c.errText)
			}
			continue
		}
		if err != nil || l.ID != c.want {
			t.Errorf("%+v: %+v, %v; want id %s", c.in, l, err, c.want)
		}
	}
	opt := DefaultOptions()
	opt.License = License{ID: "other", Name: "acme-data-1.0", Link: "https://acme.example/data-license"}
	_, meta, _, err := buildFrom(t, splitDialogues(t, 1, 2), opt)
	if err != nil {
		t.Fatal(err)
	}
	if meta["license"] != "other" || meta["license_name"] != "acme-data-1.0" || meta["license_link"] != "https://acme.example/data-license" {
		t.Errorf("front-matter license %v %v %v", meta["license"], meta["license_name"], meta["license_link"])
	}
	opt.License = License{ID: "other"}
	if _, _, _, err := buildFrom(t, splitDialogues(t, 1, 2), opt); !errors.Is(err, ErrLicense) {
		t.Errorf("license other without a name: %v", err)
	}
}
