package configgen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	sitter "github.com/tree-sitter/go-tree-sitter"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// testPlan builds a plan with count dialogues for every (language, cursor)
// pair given, the other dimensions fixed.
func testPlan(langs, cursors []string, count int) *profiles.Plan {
	pl := &profiles.Plan{Version: profiles.PlanVersion, ID: "ptest", Seed: 1}
	refFor := map[string]string{"idle": "none", "inside_function": "enclosing_function", "whole_file": "current_file"}
	for _, lang := range langs {
		for _, cur := range cursors {
			ref := refFor[cur]
			if ref == "" {
				ref = "selection"
			}
			vals := map[string]string{"intent": "explain", "instruction": "free_text", "trigger": "panel", "cursor": cur,
				"reference": ref, "language": lang, "locale": "en", "turns": "2", "difficulty": "medium", "query_style": "normal"}
			pl.Cells = append(pl.Cells, profiles.Cell{Key: profiles.CellKey(vals), Values: vals, Count: count})
			pl.N += count
		}
	}
	return pl
}

func generate(tb testing.TB, pl *profiles.Plan, cfg Config) *Result {
	tb.Helper()
	res, err := Generate(context.Background(), pl, cfg, zaptest.NewLogger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// Independent of parse.go: what the test accepts as a function, a wrapper
// selected with it, and a top-level symbol the idle cursor stays out of.
var (
	testFuncs = map[string][]string{
		"go": {"function_declaration", "method_declaration"}, "python": {"function_definition"},
		"javascript": {"function_declaration", "method_definition", "arrow_function", "function_expression"},
		"typescript": {"function_declaration", "method_definition", "arrow_function", "function_expression"},
		"java":       {"method_declaration", "constructor_declaration"},
	}
	testWrappers = []string{"decorated_definition", "export_statement", "lexical_declaration"}
)

type checkedFile struct {
	src   []byte
	lines []string
	root  *sitter.Node
	lang  string
}

func parseForTest(tb testing.TB, lang, path string) *checkedFile {
	tb.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	parser := sitter.NewParser()
	tb.Cleanup(parser.Close)
	if err := parser.SetLanguage(languages()[lang].language()); err != nil {
		tb.Fatal(err)
	}
	tree := parser.Parse(src, nil)
	tb.Cleanup(tree.Close)
	return &checkedFile{src: src, lines: strings.Split(string(src), "\n"), root: tree.RootNode(), lang: lang}
}

// point converts a 1-based character position to a tree-sitter point.
func (f *checkedFile) point(p dialog.Position) sitter.Point {
	line := f.lines[p.Line-1]
	b := 0
	for i := 1; i < p.Col; i++ {
		_, size := utf8.DecodeRuneInString(line[b:])
		b += size
	}
	return sitter.NewPoint(uint(p.Line-1), uint(b))
}

func before(a, b sitter.Point) bool { return a.Row < b.Row || a.Row == b.Row && a.Column <= b.Column }

// function returns the innermost named function containing [s, e]
// (anonymous callbacks are part of the function they are written in).
func (f *checkedFile) function(s, e sitter.Point) *sitter.Node {
	for n := f.root.NamedDescendantForPointRange(s, e); n != nil; n = n.Parent() {
		if !slices.Contains(testFuncs[f.lang], n.Kind()) {
			continue
		}
		if n.ChildByFieldName("name") != nil || n.Parent() != nil && n.Parent().Kind() == "variable_declarator" {
			return n
		}
	}
	return nil
}

func (f *checkedFile) inBody(fn *sitter.Node, s, e sitter.Point) bool {
	body := fn.ChildByFieldName("body")
	return body != nil && before(body.StartPosition(), s) && before(e, body.EndPosition()) && s.Row > fn.StartPosition().Row
}

func (f *checkedFile) check(t *testing.T, c dialog.ChatConfig) {
	t.Helper()
	switch c.CursorBehaviour {
	case "idle":
		if c.Selection != nil {
			t.Errorf("%s: idle cursor with a selection", c.ID)
		}
		row := uint(c.Cursor.Line - 1)
		for i := uint(0); i < f.root.NamedChildCount(); i++ {
			n := f.root.NamedChild(i)
			if n.Kind() != "comment" && n.Kind() != "import_declaration" && n.Kind() != "import_statement" && n.Kind() != "import_from_statement" &&
				n.Kind() != "package_clause" && n.Kind() != "package_declaration" && n.Kind() != "expression_statement" &&
				n.StartPosition().Row <= row && row <= n.EndPosition().Row {
				t.Errorf("%s: idle cursor on line %d is inside %s", c.ID, c.Cursor.Line, n.Kind())
			}
		}
		if p := f.point(*c.Cursor); f.function(p, p) != nil {
			t.Errorf("%s: idle cursor inside function", c.ID)
		}
	case "inside_function":
		p := f.point(*c.Cursor)
		fn := f.function(p, p)
		if fn == nil || !f.inBody(fn, p, p) || c.Selection != nil {
			t.Errorf("%s: cursor %v is not inside a function body of %s", c.ID, *c.Cursor, c.File)
		} else if name := fn.ChildByFieldName("name"); name != nil && name.Utf8Text(f.src) != c.Symbol {
			t.Errorf("%s: symbol %q, cursor in %q", c.ID, c.Symbol, name.Utf8Text(f.src))
		}
	case "whole_function":
		s, e := f.point(c.Selection.Start), f.point(c.Selection.End)
		var exact *sitter.Node
		for n := f.root.DescendantForPointRange(s, e); n != nil; n = n.Parent() {
			if n.StartPosition() == s && n.EndPosition() == e {
				exact = n
				break
			}
		}
		ok := exact != nil && (slices.Contains(testFuncs[f.lang], exact.Kind()) || slices.Contains(testWrappers, exact.Kind()))
		if !ok {
			t.Errorf("%s: selection %v does not cover exactly one function", c.ID, *c.Selection)
		}
	case "partial_block", "single_line":
		s, e := f.point(c.Selection.Start), f.point(c.Selection.End)
		fn := f.function(s, e)
		if fn == nil || !f.inBody(fn, s, e) {
			t.Errorf("%s: selection %v not inside a function body", c.ID, *c.Selection)
			return
		}
		if fn.StartPosition() == s && fn.EndPosition() == e {
			t.Errorf("%s: partial selection covers the whole function", c.ID)
		}
		if c.CursorBehaviour == "single_line" {
			line := f.lines[c.Selection.Start.Line-1]
			got := line[s.Column:e.Column]
			if c.Selection.End.Line != c.Selection.Start.Line || got != strings.TrimSpace(line) {
				t.Errorf("%s: single-line selection %q of line %q", c.ID, got, line)
			}
		} else if e.Row <= s.Row {
			t.Errorf("%s: partial block spans one line", c.ID)
		}
	case "whole_file":
		last := len(f.lines) - 1
		want := dialog.Selection{Start: dialog.Position{Line: 1, Col: 1},
			End: dialog.Position{Line: last + 1, Col: utf8.RuneCountInString(f.lines[last]) + 1}}
		if *c.Selection != want {
			t.Errorf("%s: whole file selection %v, want %v", c.ID, *c.Selection, want)
		}
	default:
		t.Errorf("%s: unexpected cursor behaviour %q", c.ID, c.CursorBehaviour)
	}
	if c.Selection != nil && *c.Cursor != c.Selection.End {
		t.Errorf("%s: cursor %v is not at the selection's end %v", c.ID, *c.Cursor, c.Selection.End)
	}
}

func TestPositionsPerLanguage(t *testing.T) {
	cursors := vocab.Values(vocab.DimCursor)
	for _, lang := range vocab.Values(vocab.DimLanguage) {
		t.Run(lang, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Repos = []string{filepath.Join("testdata", "repos", lang)}
			res := generate(t, testPlan([]string{lang}, cursors, 25), cfg)
			if len(res.Configs) != 25*len(cursors) {
				t.Fatalf("%d configs, want %d (stats %+v)", len(res.Configs), 25*len(cursors), res.Stats)
			}
			files := map[string]*checkedFile{}
			seen := map[string]map[string]bool{}
			for _, c := range res.Configs {
				f, ok := files[c.File]
				if !ok {
					f = parseForTest(t, lang, filepath.Join(c.Repo, c.File))
					files[c.File] = f
				}
				f.check(t, c)
				if seen[c.CursorBehaviour] == nil {
					seen[c.CursorBehaviour] = map[string]bool{}
				}
				seen[c.CursorBehaviour][posKey(c)] = true
			}
			for _, cur := range cursors[:5] {
				if len(seen[cur]) < 2 {
					t.Errorf("%s: only %d distinct positions in 25 configs", cur, len(seen[cur]))
				}
			}
		})
	}
}

func posKey(c dialog.ChatConfig) string {
	return fmt.Sprintf("%s|%v|%v", c.File, c.Cursor, c.Selection)
}

func TestPositionsOnSampleRepo(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Repos = []string{"../examples/sample-repo"}
	res := generate(t, testPlan(vocab.Values(vocab.DimLanguage), vocab.Values(vocab.DimCursor), 20), cfg)
	if res.Stats.Configs != 5*6*20 || len(res.Stats.Unfulfilled) != 0 {
		t.Fatalf("stats %+v", res.Stats)
	}
	files := map[string]*checkedFile{}
	for _, c := range res.Configs {
		f, ok := files[c.File]
		if !ok {
			f = parseForTest(t, c.Language, filepath.Join(c.Repo, c.File))
			files[c.File] = f
		}
		f.check(t, c)
	}
}
