package analyst

import (
	"math"
	"slices"
	"strings"
	"testing"

	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// index builds a RepoIndex where every listed language takes every
// listed cursor with perCell targets.
func index(langs, cursors []string, perCell int, openFiles bool) *profiles.RepoIndex {
	ix := &profiles.RepoIndex{Files: map[string]int{}, Targets: map[string]map[string]int{}, OpenFiles: map[string]bool{}}
	for _, l := range langs {
		ix.Files[l] = 3
		ix.Targets[l] = map[string]int{}
		for _, c := range cursors {
			ix.Targets[l][c] = perCell
		}
		ix.OpenFiles[l] = openFiles
	}
	return ix
}

// TestPlanForReposMovesUnrealisableLanguages is the case: the
// default profile on repositories with only Go, JavaScript and Python
// files. Every one of the 16 dialogues asked lands in a language the
// repositories hold, the other languages keep their relative weights,
// and the moves name Java and TypeScript with the reason. (MakePlan alone
// put 6 of the 16 on Java and TypeScript.)
func TestPlanForReposMovesUnrealisableLanguages(t *testing.T) {
	p := defaultProfile(t)
	ix := index([]string{"go", "javascript", "python"}, vocab.Values(vocab.DimCursor), 50, true)
	pl, err := PlanForRepos(p, ix, PlanConfig{N: 16, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	if pl.N != 16 || pl.Fit.Asked != 16 || pl.Fit.CapacityLine() != "" {
		t.Fatalf("n %d (asked %d), capacity line %q", pl.N, pl.Fit.Asked, pl.Fit.CapacityLine())
	}
	if err := pl.Check(p); err != nil {
		t.Fatal(err)
	}
	for _, c := range pl.Cells {
		if l := c.Values[vocab.DimLanguage]; l == "java" || l == "typescript" {
			t.Errorf("cell %s asks for %s", c.Key, l)
		}
	}
	ft := pl.Fit.Targets[vocab.DimLanguage]
	// Python 0.30, JavaScript 0.18, Go 0.14 re-normalised over 0.62.
	for lang, w := range map[string]float64{"python": 0.30, "javascript": 0.18, "go": 0.14} {
		if want := w / 0.62; math.Abs(ft[lang]-want) > 1e-9 {
			t.Errorf("fitted %s share %.4f, want %.4f", lang, ft[lang], want)
		}
	}
	for dim, shares := range pl.Fit.Targets {
		if dim == vocab.DimLanguage {
			continue
		}
		for v, s := range shares {
			if math.Abs(s-p.Target(dim)[v]) > 1e-9 {
				t.Errorf("%s=%s moved from %.4f to %.4f; only language should move", dim, v, p.Target(dim)[v], s)
			}
		}
	}
	var moved []string
	for _, m := range pl.Fit.Moves {
		moved = append(moved, m.Dim+"="+m.Value)
		if m.Value == "java" && !strings.Contains(m.Reason, "no usable java file") {
			t.Errorf("java moved because %q", m.Reason)
		}
	}
	slices.Sort(moved)
	want := []string{"language=go", "language=java", "language=javascript", "language=python", "language=typescript"}
	if !slices.Equal(moved, want) {
		t.Errorf("moves %v, want %v", moved, want)
	}
	if pl.Targets[vocab.DimLanguage]["java"] != p.Target(vocab.DimLanguage)["java"] {
		t.Error("the plan's targets are not the profile's")
	}
}

// TestPlanForReposCapacity: repositories holding fewer distinct targets
// than asked give a plan of that many, and the capacity line says so.
func TestPlanForReposCapacity(t *testing.T) {
	p := defaultProfile(t)
	ix := index([]string{"go"}, vocab.Values(vocab.DimCursor), 1, false) // 6 targets
	pl, err := PlanForRepos(p, ix, PlanConfig{N: 16, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	if pl.N != 6 || pl.Fit.Capacity != 6 {
		t.Fatalf("n %d, capacity %d; want 6", pl.N, pl.Fit.Capacity)
	}
	if line := pl.Fit.CapacityLine(); !strings.Contains(line, "hold 6 distinct targets") || !strings.Contains(line, "not the 16 asked") {
		t.Errorf("capacity line %q", line)
	}
	if q := pl.Quotas[vocab.DimReference][vocab.RefOpenFiles]; q != 0 {
		t.Errorf("open_files planned %d times with no second file to open", q)
	}
	if err := pl.Check(p); err != nil {
		t.Fatal(err)
	}
}

// TestFitLinkedCursor: a language whose files take only some cursor
// behaviours gets a constraint, every cell obeys it, and the cursor and
// language shares stay as the profile's where the other languages can
// take up the rest.
func TestFitLinkedCursor(t *testing.T) {
	p := defaultProfile(t)
	ix := index([]string{"go", "python", "javascript", "typescript", "java"}, vocab.Values(vocab.DimCursor), 40, true)
	delete(ix.Targets["java"], vocab.CursorIdle) // Java files: no line outside a class
	pl, err := PlanForRepos(p, ix, PlanConfig{N: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Fit.Constraints) != 1 {
		t.Fatalf("constraints %v", pl.Fit.Constraints)
	}
	for _, c := range pl.Cells {
		if c.Values[vocab.DimLanguage] == "java" && c.Values[vocab.DimCursor] == vocab.CursorIdle {
			t.Fatalf("cell %s: java with an idle cursor", c.Key)
		}
	}
	if err := pl.Check(p); err != nil {
		t.Fatal(err)
	}
	if len(pl.Fit.Moves) != 0 {
		t.Errorf("moves %v: the other languages can take the idle cursor", pl.Fit.Moves)
	}
}

// TestFitNoLanguage: repositories with no file in any language the
// profile asks for are an error that says what they hold.
func TestFitNoLanguage(t *testing.T) {
	p := defaultProfile(t)
	ix := index(nil, nil, 0, false)
	_, err := PlanForRepos(p, ix, PlanConfig{N: 5, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "no usable file in any language") {
		t.Fatalf("err %v", err)
	}
}

func defaultProfile(tb testing.TB) *profiles.Profile {
	tb.Helper()
	p, err := profiles.Builtin("default")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
