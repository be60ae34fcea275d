package main

import (
	"bytes"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// TestDocsLinks checks every relative link of the tree's Markdown files
// (README.md, docs/, the plugin's and the skills' documents): the file or
// folder it names exists, and its #fragment names a heading of the Markdown
// file it points at (GitHub's anchors: lower case, punctuation dropped,
// spaces to hyphens, -1, -2 … for repeats). Links with a scheme (https:,
// mailto:) are not followed.
func TestDocsLinks(t *testing.T) {
	files := markdownFiles(t)
	anchors := map[string][]string{}
	docs := map[string]ast.Node{}
	sources := map[string][]byte{}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		doc := md.Parser().Parse(text.NewReader(src))
		docs[f], sources[f], anchors[f] = doc, src, headingAnchors(doc, src)
	}
	for _, f := range files {
		from := 0 // where the next search for a link's line starts
		for _, dest := range linkDestinations(docs[f]) {
			var line int
			line, from = lineOf(sources[f], dest, from)
			if err := checkLink(f, dest, anchors); err != "" {
				t.Errorf("%s:%d: link %q: %s", f, line, dest, err)
			}
		}
	}
}

// TestDocsLinksCatchBreakage runs the checks on links that must fail, so
// TestDocsLinks cannot pass by checking nothing.
func TestDocsLinksCatchBreakage(t *testing.T) {
	anchors := map[string][]string{"docs/farm.md": {"simulation-farm-nats-jetstream", "many-machines"}}
	for dest, want := range map[string]string{
		"farm.md#many-machines":           "",
		"farm.md#nope":                    "no heading",
		"#simulation-farm-nats-jetstream": "",
		"#many":                           "no heading",
		"nope.md":                         "no such file",
		"../README.md":                    "",
		"https://example.com/x#y":         "",
	} {
		got := checkLink("docs/farm.md", dest, anchors)
		if !strings.Contains(got, want) || (want == "" && got != "") {
			t.Errorf("checkLink(%q) = %q, want %q", dest, got, want)
		}
	}
	src := []byte("# `make demo` and `make test` in detail\n## Candidate pool: judge–human (v1.2)\n## Steps\n## Steps\n## 中文 标题\n")
	want := []string{"make-demo-and-make-test-in-detail", "candidate-pool-judgehuman-v12", "steps", "steps-1", "中文-标题"}
	if got := headingAnchors(goldmark.New().Parser().Parse(text.NewReader(src)), src); !slices.Equal(got, want) {
		t.Errorf("anchors = %q, want %q", got, want)
	}
}

// markdownFiles lists the tree's Markdown files, slash-separated and
// relative to the repository root, leaving out tools/, out/, bin/,
// node_modules/, runs/, testdata/ (fixtures and golden outputs) and hidden
// folders (installed or generated files).
func markdownFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || slices.Contains([]string{"tools", "out", "bin", "node_modules", "runs", "testdata"}, d.Name())) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".md") {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "README.md") || !slices.Contains(files, "docs/README.md") {
		t.Fatalf("no README.md and docs/README.md under %s: found %v", repoRoot, files)
	}
	return files
}

// checkLink says what is wrong with dest, a link in file from (relative to
// the root), or "" when it resolves.
func checkLink(from, dest string, anchors map[string][]string) string {
	u, err := url.Parse(dest)
	if err != nil {
		return "does not parse: " + err.Error()
	}
	if u.Scheme != "" || u.Host != "" {
		return ""
	}
	target := from
	if u.Path != "" {
		target = path.Clean(path.Join(path.Dir(from), u.Path))
		if strings.HasPrefix(target, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(target))); err != nil {
			return "no such file " + target
		}
	}
	if u.Fragment == "" {
		return ""
	}
	have, ok := anchors[target]
	if !ok {
		return "a #fragment on " + target + ", which is no Markdown file checked here"
	}
	if !slices.Contains(have, u.Fragment) {
		return "no heading #" + u.Fragment + " in " + target
	}
	return ""
}

// linkDestinations are the destinations of doc's links and images.
func linkDestinations(doc ast.Node) []string {
	var dests []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Link:
			dests = append(dests, string(l.Destination))
		case *ast.Image:
			dests = append(dests, string(l.Destination))
		}
		return ast.WalkContinue, nil
	})
	return dests
}

// headingAnchors are the anchors GitHub gives doc's headings, in order.
func headingAnchors(doc ast.Node, src []byte) []string {
	var anchors []string
	seen := map[string]int{}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		slug := slugify(plainText(h, src))
		if k := seen[slug]; k > 0 {
			anchors = append(anchors, slug+"-"+strconv.Itoa(k))
		} else {
			anchors = append(anchors, slug)
		}
		seen[slug]++
		return ast.WalkSkipChildren, nil
	})
	return anchors
}

// plainText is the text of n's inline content (code spans included,
// markup left out).
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// slugify is GitHub's heading anchor: lower case, every character but
// letters, marks, digits, connector punctuation, hyphens and spaces
// dropped, spaces turned into hyphens.
func slugify(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == ' ':
			return '-'
		case r == '-' || unicode.In(r, unicode.L, unicode.M, unicode.Nd, unicode.Pc):
			return unicode.ToLower(r)
		}
		return -1
	}, strings.TrimSpace(strings.ToLower(s)))
}

// lineOf is the 1-based line of dest's first appearance as a link
// destination in src at or after byte from, and the byte after it; links
// come in document order, so passing that on finds each in turn.
func lineOf(src []byte, dest string, from int) (line, next int) {
	i := bytes.Index(src[from:], []byte("("+dest))
	if i < 0 {
		return 0, from
	}
	i += from
	return bytes.Count(src[:i], []byte("\n")) + 1, i + 1
}
