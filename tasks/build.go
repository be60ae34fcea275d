package tasks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/zap"
)

// StepTask is what Build writes for one step (task.json).
type StepTask struct {
	Step          int      `json:"step"`
	Language      string   `json:"language"`
	Nodes         []Node   `json:"nodes"`
	FailToPass    []string `json:"fail_to_pass"`
	PassToPass    []string `json:"pass_to_pass"`
	Files         []string `json:"files"`                    // files whose skeleton differs from the original
	SkeletonDir   string   `json:"skeleton_dir"`             // overlay: those files as in the skeleton
	Patch         string   `json:"patch"`                    // reference patch, applies to the skeleton
	Requirement   string   `json:"requirement"`              // requirement document (markdown)
	Merged        []string `json:"merged,omitempty"`         // tests merged into this step
	RequirementBy string   `json:"requirement_by,omitempty"` // "template" or a model name
}

// Build is the set of step tasks of one repository, in memory.
type Build struct {
	Repo     string
	Language string
	Graph    *Graph
	Plan     *Plan
	Tasks    []StepTask
	// States[i] holds the files that differ from the original in step i+1's
	// skeleton; States[len(Steps)] is the original (empty).
	States []map[string][]byte
}

// BuildOptions configures BuildTasks.
type BuildOptions struct {
	Python string // interpreter for the Python stubber (default /usr/bin/python3)
	// Model, when set, writes the requirement documents (cached in
	// out/requirements-cache); nil uses the deterministic template.
	Model Model
	Log   *zap.Logger
}

// BuildTasks writes, for every step of plan, the skeleton overlay, the
// reference patch, the requirement document and task.json under out/steps.
// Step n's skeleton stubs the nodes of steps n..end, so no later code is
// left in it; its reference patch turns it into step n+1's skeleton.
func BuildTasks(ctx context.Context, g *Graph, plan *Plan, out string, opt BuildOptions) (*Build, error) {
	if opt.Log == nil {
		opt.Log = zap.NewNop()
	}
	if opt.Python == "" {
		opt.Python = "/usr/bin/python3"
	}
	b := &Build{Repo: g.Repo, Language: g.Language, Graph: g, Plan: plan}
	byID := map[string]Node{}
	for _, n := range g.Nodes {
		byID[n.ID] = n
	}
	orig := map[string][]byte{}
	for i := range plan.Steps {
		st, err := stubState(opt.Python, g, byID, plan.Stubbed(i+1), orig)
		if err != nil {
			return nil, fmt.Errorf("skeleton of step %d: %w", i+1, err)
		}
		b.States = append(b.States, st)
	}
	b.States = append(b.States, map[string][]byte{})
	for i, s := range plan.Steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		skel, next := b.States[i], b.States[i+1]
		files := sortedKeys(skel)
		after := map[string][]byte{}
		for _, f := range files {
			if c, ok := next[f]; ok {
				after[f] = c
			} else {
				after[f] = orig[f]
			}
		}
		patch, err := gitDiff(ctx, skel, after)
		if err != nil {
			return nil, fmt.Errorf("reference patch of step %d: %w", s.N, err)
		}
		t := StepTask{Step: s.N, Language: g.Language, FailToPass: s.Tests, PassToPass: plan.PassToPass(s.N),
			Files: files, Merged: s.Merged}
		for _, id := range s.Nodes {
			t.Nodes = append(t.Nodes, byID[id])
		}
		dir := filepath.Join(out, "steps", fmt.Sprintf("step-%03d", s.N))
		t.SkeletonDir = filepath.Join(dir, "skeleton")
		t.Patch = filepath.Join(dir, "reference.patch")
		t.Requirement = filepath.Join(dir, "requirement.md")
		if err := writeFiles(t.SkeletonDir, skel); err != nil {
			return nil, err
		}
		if err := os.WriteFile(t.Patch, []byte(patch), 0o644); err != nil {
			return nil, fmt.Errorf("write patch: %w", err)
		}
		req, by, err := requirement(ctx, opt.Model, filepath.Join(out, "requirements-cache"), g, t, orig)
		if err != nil {
			return nil, err
		}
		t.RequirementBy = by
		if err := os.WriteFile(t.Requirement, []byte(req), 0o644); err != nil {
			return nil, fmt.Errorf("write requirement: %w", err)
		}
		if err := WriteJSON(filepath.Join(dir, "task.json"), t); err != nil {
			return nil, err
		}
		b.Tasks = append(b.Tasks, t)
	}
	opt.Log.Info("built steps", zap.Int("steps", len(b.Tasks)))
	return b, nil
}

// stubState returns the stubbed contents of every file holding one of ids;
// orig caches the original contents.
func stubState(python string, g *Graph, byID map[string]Node, ids []string, orig map[string][]byte) (map[string][]byte, error) {
	perFile := map[string][]Node{}
	for _, id := range ids {
		n, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("node %s is not in the graph", id)
		}
		perFile[n.File] = append(perFile[n.File], n)
	}
	st := map[string][]byte{}
	for _, f := range sortedKeys(perFile) {
		src, ok := orig[f]
		if !ok {
			var err error
			if src, err = os.ReadFile(filepath.Join(g.Repo, f)); err != nil {
				return nil, fmt.Errorf("read %s: %w", f, err)
			}
			orig[f] = src
		}
		var out []byte
		var err error
		switch g.Language {
		case LangGo:
			lines := map[int]bool{}
			for _, n := range perFile[f] {
				lines[n.Line] = true
			}
			out, err = stubGo(filepath.Join(g.Repo, f), src, lines)
		default:
			out, err = stubPython(python, f, src, perFile[f])
		}
		if err != nil {
			return nil, err
		}
		st[f] = out
	}
	return st, nil
}

func writeFiles(dir string, files map[string][]byte) error {
	for f, c := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, c, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	return nil
}

// gitDiff returns the unified diff (git format, with "\ No newline at end
// of file" markers where needed) that turns before into after.
func gitDiff(ctx context.Context, before, after map[string][]byte) (string, error) {
	dir, err := os.MkdirTemp("", "dialogfarm-diff-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	git := func(args ...string) (string, error) {
		res, err := runCmd(ctx, dir, []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir}, 0, "git",
			append([]string{"-c", "core.autocrlf=false", "-c", "core.quotepath=off"}, args...)...)
		if err != nil {
			return "", err
		}
		if res.ExitCode != 0 {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), res.Output)
		}
		return res.Output, nil
	}
	if _, err := git("init", "-q"); err != nil {
		return "", err
	}
	if err := writeFiles(dir, before); err != nil {
		return "", err
	}
	if _, err := git("add", "-A"); err != nil {
		return "", err
	}
	if err := writeFiles(dir, after); err != nil {
		return "", err
	}
	return git("diff", "--no-color", "--no-ext-diff")
}

// requirementDoc is the deterministic requirement document of a step: what
// to implement (signatures and doc comments as the skeleton shows them) and
// which tests must pass.
func requirementDoc(g *Graph, t StepTask, orig map[string][]byte) string {
	var b strings.Builder
	var names []string
	for _, n := range t.Nodes {
		names = append(names, "`"+n.Name+"`")
	}
	fmt.Fprintf(&b, "# Step %d: implement %s\n\n", t.Step, strings.Join(names, ", "))
	b.WriteString("The functions below are stubs in the repository. Implement them so that the listed tests pass,\nwithout changing their signatures and without breaking the tests that already pass.\n\n## Functions\n\n")
	for _, n := range t.Nodes {
		fmt.Fprintf(&b, "### `%s` (%s:%d)\n\n```%s\n%s\n```\n\n", n.Name, n.File, n.Line, g.Language, declarationText(orig[n.File], n))
	}
	b.WriteString("## Tests that must pass\n\n")
	for _, id := range t.FailToPass {
		fmt.Fprintf(&b, "- `%s`\n", id)
	}
	fmt.Fprintf(&b, "\n%d other tests must keep passing.\n", len(t.PassToPass))
	return b.String()
}

// declarationText is the node's doc comment/decorators and signature: the
// lines from the comment above it to the line that opens its body.
func declarationText(src []byte, n Node) string {
	lines := strings.Split(string(src), "\n")
	if n.Line < 1 || n.Line > len(lines) {
		return n.Name
	}
	start := n.Line - 1
	for start > 0 && strings.HasPrefix(strings.TrimSpace(lines[start-1]), "//") {
		start--
	}
	end := n.Line - 1
	for end < len(lines)-1 && end < n.EndLine-1 && !opensBody(lines[end]) {
		end++
	}
	return strings.Join(slices.Clone(lines[start:end+1]), "\n")
}

func opensBody(l string) bool {
	l = strings.TrimRight(l, " \t")
	return strings.HasSuffix(l, "{") || strings.HasSuffix(l, ":") || strings.Contains(l, "{ ")
}
