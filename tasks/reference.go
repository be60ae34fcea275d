package tasks

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dialogfarm/dialog"
)

// Asked returns the functions (graph node names) a config's first query
// names, in the order the graph lists them: what a correct answer to the
// question asked implements.
func (j *ExecJudge) Asked(c dialog.ChatConfig) []string {
	if len(c.Turns) == 0 {
		return nil
	}
	q := c.Turns[0].Query
	var out []string
	for _, n := range j.graph.Nodes {
		if mentions(q, displayName(n)) && !slices.Contains(out, n.Name) {
			out = append(out, n.Name)
		}
	}
	return out
}

// mentions reports whether text names name as a whole (not as part of a
// longer identifier or qualified name).
func mentions(text, name string) bool {
	word := func(r byte) bool {
		return r == '_' || r == '.' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
	}
	for from := 0; ; {
		i := strings.Index(text[from:], name)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(name)
		before := i == 0 || !word(text[i-1])
		after := end == len(text) || !word(text[end]) || (text[end] == '.' && (end+1 == len(text) || !word(text[end+1])))
		if before && after {
			return true
		}
		from = i + 1
	}
}

// ReferenceAnswer is the answer a perfect assistant gives when asked for
// functions (graph node names; nil: every function of the step) in the
// generate (or fix) config c: a sentence in c's locale, then the code the
// reference patch gives them in one fenced block, as a model would write
// it — Go with its file's imports, Python methods inside their classes.
// With the functions a config asks for (Asked), a score of 5 from the
// execution judge shows that the config asks for what its step's tests
// need.
func (j *ExecJudge) ReferenceAnswer(ctx context.Context, c dialog.ChatConfig, functions []string) (string, error) {
	configID := c.ID
	st, ok := j.steps[strings.TrimSuffix(configID, "__tests")]
	if !ok {
		return "", fmt.Errorf("reference answer: %s is not an instance of this build", configID)
	}
	if len(st.files) != 1 {
		return "", fmt.Errorf("reference answer of %s: its functions are in %d files", configID, len(st.files))
	}
	names := st.names
	if functions != nil {
		names = nil
		for _, fn := range functions {
			for _, n := range j.graph.Nodes {
				if n.Name == fn && n.File == st.files[0] && !slices.Contains(names, shortName(n)) {
					names = append(names, shortName(n))
				}
			}
		}
		if len(names) == 0 {
			return "", fmt.Errorf("reference answer of %s: none of %s is in %s", configID, strings.Join(functions, ", "), st.files[0])
		}
	}
	work, err := os.MkdirTemp("", "dialogfarm-ref-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if err := os.CopyFS(work, os.DirFS(st.inst.SkeletonFiles)); err != nil {
		return "", fmt.Errorf("copy the skeleton files of %s: %w", configID, err)
	}
	patch := filepath.Join(work, ".reference.patch")
	if err := os.WriteFile(patch, []byte(st.inst.Patch), 0o644); err != nil {
		return "", err
	}
	if res, err := runCmd(ctx, work, nil, 0, "git", "apply", patch); err != nil || res.ExitCode != 0 {
		return "", fmt.Errorf("apply the reference patch of %s: %v %s", configID, err, res.Output)
	}
	file := st.files[0]
	src, err := os.ReadFile(filepath.Join(work, filepath.FromSlash(file)))
	if err != nil {
		return "", err
	}
	code, err := referenceCode(st.inst.Language, j.python, file, src, names)
	if err != nil {
		return "", fmt.Errorf("reference answer of %s: %w", configID, err)
	}
	intro := "Here is the implementation:"
	if c.Locale == "zh" {
		intro = "下面是实现："
	}
	return intro + "\n\n```" + st.inst.Language + "\n" + code + "\n```\n", nil
}

// referenceCode is the source of the functions names of a file: Go
// preceded by the file's import declarations, Python without docstrings
// (the file has them; repeating them is not part of an answer) and
// methods wrapped in their classes.
func referenceCode(lang, python, file string, src []byte, names []string) (string, error) {
	defs, err := defsOf(lang, python, file, src)
	if err != nil {
		return "", err
	}
	var parts []string
	if lang == LangGo {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, src, parser.ImportsOnly)
		if err != nil {
			return "", fmt.Errorf("parse %s: %w", file, err)
		}
		for _, d := range f.Decls {
			parts = append(parts, string(src[fset.Position(d.Pos()).Offset:fset.Position(d.End()).Offset]))
		}
	}
	found := map[string]bool{}
	var classes []string
	methods := map[string][]string{}
	for _, d := range defs {
		if !slices.Contains(names, d.Name) || found[d.Name] {
			continue
		}
		found[d.Name] = true
		cls := ""
		if lang == LangPython {
			if i := strings.LastIndex(d.Name, "."); i >= 0 {
				cls = d.Name[:i]
			}
		}
		if cls == "" {
			parts = append(parts, strings.TrimRight(d.Code, "\n"))
			continue
		}
		if methods[cls] == nil {
			classes = append(classes, cls)
		}
		methods[cls] = append(methods[cls], strings.TrimRight(d.Code, "\n"))
	}
	for _, n := range names {
		if !found[n] {
			return "", fmt.Errorf("%s does not declare %s", file, n)
		}
	}
	for _, cls := range classes {
		parts = append(parts, pyClassBlock(strings.Split(cls, "."), methods[cls]))
	}
	return strings.Join(parts, "\n\n"), nil
}

// pyClassBlock nests methods in class statements for the class path.
func pyClassBlock(path []string, methods []string) string {
	var b strings.Builder
	for i, c := range path {
		fmt.Fprintf(&b, "%sclass %s:\n", strings.Repeat("    ", i), c)
	}
	indent := strings.Repeat("    ", len(path))
	for i, m := range methods {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, l := range strings.Split(m, "\n") {
			if strings.TrimSpace(l) != "" {
				b.WriteString(indent)
			}
			b.WriteString(l + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// ConfigPrompt is the user message an editor plugin sends for config c's
// first turn: the open file (as the config's workspace has it) in a fenced
// block, then the query. Judging a reference answer against it gives the
// judge's context rules what a real dialogue gives them.
func ConfigPrompt(c dialog.ChatConfig) (string, error) {
	src, err := os.ReadFile(filepath.Join(c.Repo, filepath.FromSlash(c.File)))
	if err != nil {
		return "", fmt.Errorf("prompt of %s: %w", c.ID, err)
	}
	if len(c.Turns) == 0 {
		return "", fmt.Errorf("prompt of %s: the config has no turn", c.ID)
	}
	return fmt.Sprintf("%s:\n```%s\n%s\n```\n\n%s", c.File, c.Language, strings.TrimRight(string(src), "\n"), c.Turns[0].Query), nil
}
