package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"

	"dialogfarm/dataset"
	"dialogfarm/dialog"
	"dialogfarm/internal/jsonl"
	"dialogfarm/internal/runfiles"
)

// dataOperators work on recorded dialogues: sources, filters, dedup,
// split and merge.
func dataOperators() []*Operator {
	dl := func(name string) Port { return Port{Name: name, Type: TypeDialogues} }
	return []*Operator{
		{
			Name: "load_dialogues", Category: "source", Doc: "Reads recorded dialogues (a dialogues.jsonl of an earlier run).",
			Outputs: []Port{dl("dialogues")},
			Params: object([]string{"path"}, map[string]*jsonschema.Schema{
				"path":   str("dialogues JSONL", nil),
				"judged": boolean("the records carry verdicts (scores)", true),
			}),
			Resources: map[string]string{"path": ResourceFile},
			fields: func(_ map[string][]string, p map[string]any) map[string][]string {
				if j, ok := p["judged"].(bool); ok && !j {
					return map[string][]string{"dialogues": dialogueFields}
				}
				return map[string][]string{"dialogues": judgedFields}
			},
			run: runLoadDialogues,
		},
		{
			Name: "load_configs", Category: "source", Doc: "Reads chat configs (a configs.jsonl).",
			Outputs:   []Port{{Name: "configs", Type: TypeConfigs}},
			Params:    object([]string{"path"}, map[string]*jsonschema.Schema{"path": str("configs JSONL", nil)}),
			Resources: map[string]string{"path": ResourceFile},
			fields: func(map[string][]string, map[string]any) map[string][]string {
				return map[string][]string{"configs": configFields}
			},
			run: runLoadConfigs,
		},
		{
			Name: "filter", Category: "data", Doc: "Keeps (or, with exclude, drops) dialogues whose field has one of the values: e.g. intent or language.",
			Inputs: []Port{dl("dialogues")}, Outputs: []Port{dl("dialogues")},
			Params: object([]string{"field", "values"}, map[string]*jsonschema.Schema{
				"field":   str("record field, e.g. intent, language, locale, difficulty, trigger", nil),
				"values":  strList("values to keep", 1),
				"exclude": boolean("drop the matching dialogues instead", false),
			}),
			FieldParams: map[string]string{"field": "dialogues"},
			run:         runFilter,
		},
		{
			Name: "filter_score", Category: "data", Doc: "Keeps ok dialogues whose every turn's shown answer scored at least min.",
			Inputs: []Port{dl("dialogues")}, Outputs: []Port{dl("dialogues")},
			Params:      object([]string{"min"}, map[string]*jsonschema.Schema{"min": number("lowest turn score", 0, 5, nil)}),
			NeedsFields: map[string][]string{"dialogues": {"score"}},
			run:         runFilterScore,
		},
		{
			Name: "dedup", Category: "data", Doc: "Drops dialogues whose queries (and answers, by key) repeat an earlier one's: exactly after lower-casing and collapsing spaces and punctuation, and, with near > 0, at that estimated Jaccard similarity of character 5-grams (MinHash LSH, as the dataset stage).",
			Inputs: []Port{dl("dialogues")}, Outputs: []Port{dl("dialogues")},
			Params: object(nil, map[string]*jsonschema.Schema{
				"key":  str("what must repeat", "query", "query", "query_answer"),
				"near": number("near-duplicate Jaccard threshold (0: exact only)", 0, 1, 0),
			}),
			NeedsFields: map[string][]string{"dialogues": {"query"}},
			run:         runDedup,
		},
		{
			Name: "split", Category: "data", Doc: "Splits dialogues into train and validation by a seeded hash of the config id (stable as the data grows).",
			Inputs: []Port{dl("dialogues")}, Outputs: []Port{dl("train"), dl("validation")},
			Params: object(nil, map[string]*jsonschema.Schema{
				"validation": number("share of dialogues for validation", 0, 1, 0.1),
				"seed":       integer("hash seed", 0, 1<<53, 1),
			}),
			fields: func(in map[string][]string, _ map[string]any) map[string][]string {
				return map[string][]string{"train": in["dialogues"], "validation": in["dialogues"]}
			},
			run: runSplit,
		},
		{
			Name: "merge", Category: "data", Doc: "Concatenates two dialogue sets; a config id seen in a is not taken again from b.",
			Inputs: []Port{dl("a"), dl("b")}, Outputs: []Port{dl("dialogues")},
			Params: object(nil, map[string]*jsonschema.Schema{}),
			fields: func(in map[string][]string, _ map[string]any) map[string][]string {
				return map[string][]string{"dialogues": intersect(in["a"], in["b"])}
			},
			run: runMerge,
		},
	}
}

func runLoadDialogues(_ context.Context, x *nodeRun) error {
	var p struct{ Path string }
	if err := x.decode(&p); err != nil {
		return err
	}
	ds, err := readDialogues(p.Path)
	if err != nil {
		return err
	}
	return writeDialogues(x.out["dialogues"].Path, ds)
}

func runLoadConfigs(_ context.Context, x *nodeRun) error {
	var p struct{ Path string }
	if err := x.decode(&p); err != nil {
		return err
	}
	data, err := os.ReadFile(p.Path)
	if err != nil {
		return fmt.Errorf("read configs: %w", err)
	}
	if _, err := dialog.ReadConfigs(bytes.NewReader(data), p.Path); err != nil {
		return err
	}
	return runfiles.WriteAtomic(x.out["configs"].Path, data)
}

// fieldOf is a dialogue's value of a config field.
func fieldOf(d dialog.Dialogue, field string) string {
	if field == "config_id" {
		return d.ConfigID
	}
	if field == "status" {
		return d.Status
	}
	data, _ := json.Marshal(d.Config)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	if v, ok := m[field]; ok {
		return fmt.Sprint(v)
	}
	return ""
}

func runFilter(_ context.Context, x *nodeRun) error {
	var p struct {
		Field   string
		Values  []string
		Exclude bool
	}
	if err := x.decode(&p); err != nil {
		return err
	}
	return x.mapDialogues("dialogues", "dialogues", func(ds []dialog.Dialogue) []dialog.Dialogue {
		return slices.DeleteFunc(ds, func(d dialog.Dialogue) bool {
			return slices.Contains(p.Values, fieldOf(d, p.Field)) == p.Exclude
		})
	})
}

// TurnScore is the score of the answer a turn showed: the best verdict of
// a candidate whose text is the answer (0 without one).
func TurnScore(ex dialog.Exchange) float64 {
	best, found := 0.0, false
	for _, v := range ex.Verdicts {
		if v.Candidate < 0 || v.Candidate >= len(ex.Candidates) || ex.Candidates[v.Candidate].Text != ex.Answer {
			continue
		}
		if !found || v.Score > best {
			best, found = v.Score, true
		}
	}
	return best
}

func runFilterScore(_ context.Context, x *nodeRun) error {
	var p struct{ Min float64 }
	if err := x.decode(&p); err != nil {
		return err
	}
	return x.mapDialogues("dialogues", "dialogues", func(ds []dialog.Dialogue) []dialog.Dialogue {
		return slices.DeleteFunc(ds, func(d dialog.Dialogue) bool {
			if d.Status != dialog.StatusOK || len(d.Turns) == 0 {
				return true
			}
			for _, t := range d.Turns {
				if TurnScore(t.Exchange) < p.Min {
					return true
				}
			}
			return false
		})
	})
}

// normalizeText lower-cases and keeps letters and digits, one space
// between words.
func normalizeText(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

func runDedup(_ context.Context, x *nodeRun) error {
	var p struct {
		Key  string
		Near float64
	}
	if err := x.decode(&p); err != nil {
		return err
	}
	return x.mapDialogues("dialogues", "dialogues", func(ds []dialog.Dialogue) []dialog.Dialogue {
		texts := make([]string, len(ds))
		for i, d := range ds {
			var b strings.Builder
			for _, t := range d.Turns {
				b.WriteString(normalizeText(t.Query) + "\n")
				if p.Key == "query_answer" {
					b.WriteString(normalizeText(t.Answer) + "\n")
				}
			}
			texts[i] = b.String()
			if len(d.Turns) == 0 {
				texts[i] = "\x01" + d.ConfigID // nothing to compare: never a duplicate
			}
		}
		opt := dataset.DefaultDedup()
		opt.Near = p.Near
		drop := dataset.Duplicates(texts, opt)
		var out []dialog.Dialogue
		for i, d := range ds {
			if drop[i] == "" {
				out = append(out, d)
			}
		}
		return out
	})
}

// inValidation says whether a config id falls in the validation share.
func inValidation(id string, seed int64, share float64) bool {
	h := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s", seed, id)))
	return float64(binary.BigEndian.Uint64(h[:8])>>11)/float64(1<<53) < share
}

func runSplit(_ context.Context, x *nodeRun) error {
	var p struct {
		Validation float64
		Seed       int64
	}
	if err := x.decode(&p); err != nil {
		return err
	}
	ds, err := readDialogues(x.in["dialogues"].Path)
	if err != nil {
		return err
	}
	var train, val []dialog.Dialogue
	for _, d := range ds {
		if inValidation(d.ConfigID, p.Seed, p.Validation) {
			val = append(val, d)
		} else {
			train = append(train, d)
		}
	}
	if err := writeDialogues(x.out["train"].Path, train); err != nil {
		return err
	}
	return writeDialogues(x.out["validation"].Path, val)
}

func runMerge(_ context.Context, x *nodeRun) error {
	a, err := readDialogues(x.in["a"].Path)
	if err != nil {
		return err
	}
	b, err := readDialogues(x.in["b"].Path)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var out []dialog.Dialogue
	for _, d := range append(a, b...) {
		if !seen[d.ConfigID] {
			seen[d.ConfigID] = true
			out = append(out, d)
		}
	}
	return writeDialogues(x.out["dialogues"].Path, out)
}

// mapDialogues reads input port in, applies f and writes output port out.
func (x *nodeRun) mapDialogues(in, out string, f func([]dialog.Dialogue) []dialog.Dialogue) error {
	ds, err := readDialogues(x.in[in].Path)
	if err != nil {
		return err
	}
	return writeDialogues(x.out[out].Path, f(ds))
}

func readDialogues(path string) ([]dialog.Dialogue, error) {
	ds, _, err := jsonl.ReadLog[dialog.Dialogue](path)
	return ds, err
}

// writeDialogues writes dialogues as JSON lines, atomically.
func writeDialogues(path string, ds []dialog.Dialogue) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, d := range ds {
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return runfiles.WriteAtomic(path, b.Bytes())
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, s := range a {
		if slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}
