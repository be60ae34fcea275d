package tasks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dialogfarm/dialog"
)

// Model writes requirement documents; a pool.Member (the model gateway)
// satisfies it.
type Model interface {
	Model() string
	Complete(ctx context.Context, msgs []dialog.Message) (dialog.Candidate, error)
}

const requirementSystem = `You write the requirement document of one step of an incremental coding task.
The developer sees a repository in which the functions listed below are stubs and must implement them.
From the template document and the tests that must pass, write a clear requirement in Markdown:
what each function must do (inputs, outputs, errors, edge cases the tests check), without writing
the implementation and without code from the tests. Keep every function's name and signature.`

// requirement returns the step's requirement document and who wrote it:
// the deterministic template, or the model (cached under cacheDir by the
// prompt's hash, so a rebuild costs nothing). decls are the step's
// functions as its skeleton declares them.
func requirement(ctx context.Context, m Model, cacheDir string, g *Graph, t StepTask, decls []funcDef) (string, string, error) {
	doc := requirementDoc(g, t, decls)
	if m == nil {
		return doc, "template", nil
	}
	var tests strings.Builder
	for _, id := range t.FailToPass {
		if src := testSource(g, id); src != "" {
			fmt.Fprintf(&tests, "\n### %s\n\n```%s\n%s\n```\n", id, g.Language, src)
		}
	}
	msgs := []dialog.Message{
		{Role: "system", Content: requirementSystem},
		{Role: "user", Content: "Template document:\n\n" + doc + "\n\nTests:\n" + tests.String()},
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", m.Model(), msgs[0].Content, msgs[1].Content)
	key := hex.EncodeToString(h.Sum(nil))[:32]
	path := filepath.Join(cacheDir, key+".md")
	if b, err := os.ReadFile(path); err == nil {
		return string(b), "model:" + m.Model(), nil
	}
	c, err := m.Complete(ctx, msgs)
	if err != nil {
		return "", "", fmt.Errorf("requirement of step %d: %w", t.Step, err)
	}
	text := strings.TrimSpace(c.Text) + "\n"
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return "", "", fmt.Errorf("cache requirement: %w", err)
	}
	return text, "model:" + m.Model(), nil
}

// testSource is the text of a test function: from its def/func line to the
// end of its body (by indentation for Python, the closing brace for Go).
func testSource(g *Graph, id string) string {
	var t Test
	for _, x := range g.Tests {
		if x.ID == id {
			t = x
		}
	}
	if t.File == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(g.Repo, filepath.FromSlash(t.File)))
	if err != nil {
		return ""
	}
	name := t.Name[strings.LastIndex(t.Name, ":")+1:]
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " \t")
		if !strings.HasPrefix(trimmed, "func "+name+"(") && !strings.HasPrefix(trimmed, "def "+name+"(") {
			continue
		}
		indent := len(l) - len(trimmed)
		end := i + 1
		for ; end < len(lines); end++ {
			nl := lines[end]
			nt := strings.TrimLeft(nl, " \t")
			if g.Language == LangGo && nl == "}" {
				end++
				break
			}
			if g.Language == LangPython && nt != "" && len(nl)-len(nt) <= indent {
				break
			}
		}
		return strings.TrimRight(strings.Join(lines[i:end], "\n"), "\n")
	}
	return ""
}

// requirementDoc is the deterministic requirement document of a step: what
// to implement (doc comments, decorators, signatures and Python docstrings
// as the skeleton shows them, never a body, with the line each function is
// on in the skeleton) and which tests must pass.
func requirementDoc(g *Graph, t StepTask, decls []funcDef) string {
	var b strings.Builder
	var names []string
	for _, n := range t.Nodes {
		names = append(names, "`"+n.Name+"`")
	}
	fmt.Fprintf(&b, "# Step %d: implement %s\n\n", t.Step, strings.Join(names, ", "))
	b.WriteString("The functions below are stubs in the repository. Implement them so that the listed tests pass,\nwithout changing their signatures and without breaking the tests that already pass.\n\n## Functions\n\n")
	for i, n := range t.Nodes {
		d := decls[i]
		fmt.Fprintf(&b, "### `%s` (%s:%d)\n\n```%s\n%s\n```\n\n", n.Name, n.File, d.Line, g.Language, d.Decl)
	}
	b.WriteString("## Tests that must pass\n\n")
	for _, id := range t.FailToPass {
		fmt.Fprintf(&b, "- `%s`\n", id)
	}
	fmt.Fprintf(&b, "\n%d other tests must keep passing.\n", len(t.PassToPass))
	return b.String()
}

// skeletonDecls returns each node's declaration as the skeleton (the
// repository with skel laid over it) shows it: its line there and its
// doc comment, decorators, signature and docstring.
func skeletonDecls(lang, python string, ix *repoIndex, skel map[string][]byte, nodes []Node) ([]funcDef, error) {
	defs := map[string][]funcDef{}
	py := map[string][]byte{}
	seen := map[string]bool{}
	for _, n := range nodes {
		if seen[n.File] {
			continue
		}
		seen[n.File] = true
		src, ok := skel[n.File]
		if !ok {
			src = ix.files[n.File].src
		}
		if lang == LangGo {
			ds, err := goDefs(n.File, src)
			if err != nil {
				return nil, err
			}
			defs[n.File] = ds
		} else {
			py[n.File] = src
		}
	}
	if len(py) > 0 {
		m, err := pyDefs(python, py)
		if err != nil {
			return nil, err
		}
		for f, ds := range m {
			defs[f] = ds
		}
	}
	out := make([]funcDef, len(nodes))
	for i, n := range nodes {
		var orig []funcDef
		if f, ok := ix.files[n.File]; ok {
			orig = f.defs
		}
		d, ok := findDef(defs[n.File], orig, n)
		if !ok {
			return nil, fmt.Errorf("%s: %s is not declared in the skeleton", n.File, shortName(n))
		}
		out[i] = d
	}
	return out, nil
}
