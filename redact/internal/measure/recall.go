// Package measure measures package redact: recall on the labelled corpus
// of fake secrets (redact/testdata/recall) and false positives on
// ordinary text. `make bench-redact` prints both (redact/internal/
// redactbench); redact's tests hold recall to a floor.
package measure

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dialogfarm/internal/jsonl"
	"dialogfarm/redact"
)

// Label is one secret of the labelled corpus: the file (relative to the
// corpus), the 1-based line its value starts on in the decoded text, its
// kind, the value, the layout it is written in and whether it is split
// across string literals (then Value is the joined secret).
type Label struct {
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Kind   string `json:"kind"`
	Value  string `json:"value"`
	Layout string `json:"layout"`
	Split  bool   `json:"split"`
}

// ReadLabels reads a labels file (JSON lines).
func ReadLabels(path string) ([]Label, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read labels: %w", err)
	}
	defer f.Close()
	var out []Label
	err = jsonl.Each(f, path, func(n int, line []byte) error {
		var l Label
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		if l.Path == "" || l.Line < 1 || l.Kind == "" || l.Value == "" {
			return errors.New("path, line, kind and value are required")
		}
		out = append(out, l)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read labels: %w", err)
	}
	return out, nil
}

// Miss is a labelled secret that (partly) survived redaction.
type Miss struct {
	Label
	// Left is the longest piece of the value still in the sanitised text.
	Left string
}

// RecallResult is what Recall measured.
type RecallResult struct {
	Secrets, Kinds, Files int
	Missed                []Miss
	// PerLayout counts secrets and misses per layout.
	PerLayout map[string][2]int
}

// Recall is the share of secrets redacted.
func (r RecallResult) Recall() float64 {
	return float64(r.Secrets-len(r.Missed)) / float64(max(r.Secrets, 1))
}

// MissedKinds counts misses per kind, most first.
func (r RecallResult) MissedKinds() []string {
	n := map[string]int{}
	for _, m := range r.Missed {
		n[m.Kind]++
	}
	var out []string
	for k, v := range n {
		out = append(out, fmt.Sprintf("%s %d", k, v))
	}
	slices.Sort(out)
	return out
}

// Recall sanitises the corpus with r as a run does (redact.Sanitise into
// a temporary folder) and checks every label: the value counts as caught
// when no piece of it of leakLen(value) characters or more is left on its
// lines of the sanitised file (decoded as the original was).
func Recall(ctx context.Context, r *redact.Redactor, corpus, labelsPath string) (RecallResult, error) {
	var res RecallResult
	labels, err := ReadLabels(labelsPath)
	if err != nil {
		return res, err
	}
	tmp, err := os.MkdirTemp("", "recall-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	c, err := redact.Sanitise(ctx, r, corpus, filepath.Join(tmp, "copy"), "")
	if err != nil {
		return res, err
	}
	res.Files = c.Files
	res.PerLayout = map[string][2]int{}
	kinds := map[string]bool{}
	cache := map[string][]string{}
	lines := func(dir, rel string) ([]string, error) {
		key := dir + "\x00" + rel
		if ls, ok := cache[key]; ok {
			return ls, nil
		}
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			return nil, err
		}
		ls := strings.Split(redact.DecodeText(data), "\n")
		cache[key] = ls
		return ls, nil
	}
	for _, l := range labels {
		res.Secrets++
		kinds[l.Kind] = true
		n := strings.Count(l.Value, "\n") + 1
		orig, err := lines(corpus, l.Path)
		if err != nil {
			return res, fmt.Errorf("label %s:%d: %w", l.Path, l.Line, err)
		}
		if l.Line+n-1 > len(orig) || (!l.Split && !strings.Contains(strings.Join(orig[l.Line-1:l.Line-1+n], "\n"), l.Value)) {
			return res, fmt.Errorf("label %s:%d (%s): the value is not on that line", l.Path, l.Line, l.Kind)
		}
		got, err := lines(filepath.Join(tmp, "copy"), l.Path)
		if err != nil {
			return res, fmt.Errorf("label %s:%d: %w", l.Path, l.Line, err)
		}
		pl := res.PerLayout[l.Layout]
		pl[0]++
		if l.Line+n-1 > len(got) {
			return res, fmt.Errorf("label %s:%d: the sanitised file has %d lines", l.Path, l.Line, len(got))
		}
		if left := longestCommon(l.Value, strings.Join(got[l.Line-1:l.Line-1+n], "\n")); len(left) >= leakLen(l.Value) {
			res.Missed = append(res.Missed, Miss{Label: l, Left: left})
			pl[1]++
		}
		res.PerLayout[l.Layout] = pl
	}
	res.Kinds = len(kinds)
	slices.SortFunc(res.Missed, func(a, b Miss) int { return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Path, b.Path)) })
	return res, nil
}

// leakLen is how long a piece of a secret left behind must be to count as
// a leak: half the secret, at least 6 and at most 12 characters (a
// prefix such as "sk_live_" or "ghp_" left in front of a placeholder is
// no leak).
func leakLen(v string) int { return min(12, max(6, (len(v)+1)/2)) }

// longestCommon returns the longest substring of a that is in b.
func longestCommon(a, b string) string {
	best := ""
	for i := 0; i < len(a); i++ {
		for j := i + len(best) + 1; j <= len(a); j++ {
			if !strings.Contains(b, a[i:j]) {
				break
			}
			best = a[i:j]
		}
	}
	return best
}
