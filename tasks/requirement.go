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
// prompt's hash, so a rebuild costs nothing).
func requirement(ctx context.Context, m Model, cacheDir string, g *Graph, t StepTask, orig map[string][]byte) (string, string, error) {
	doc := requirementDoc(g, t, orig)
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
