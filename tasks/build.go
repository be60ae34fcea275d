package tasks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	// Copies are the functions stubbed because they hold the body of a
	// stubbed function (build-tag twins, vendored or generated copies),
	// as file:line name in the original.
	Copies []string `json:"stubbed_copies,omitempty"`
	// Leaks are this step's function bodies still found in its skeleton
	// workspace or requirement; the audit fails a step with any.
	Leaks []Leak `json:"leaks,omitempty"`
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

	index *repoIndex
	decls [][]funcDef // per step, its functions as its skeleton declares them
	opt   BuildOptions
	out   string
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
// left in it, and every copy of their bodies elsewhere in the repository
// that can be stubbed (see repoIndex.twins); its reference patch turns it
// into step n+1's skeleton. Bodies still found in a step's workspace are
// its Leaks.
func BuildTasks(ctx context.Context, g *Graph, plan *Plan, out string, opt BuildOptions) (*Build, error) {
	if opt.Log == nil {
		opt.Log = zap.NewNop()
	}
	if opt.Python == "" {
		opt.Python = "/usr/bin/python3"
	}
	ix, err := indexRepo(g.Repo, g.Language, opt.Python)
	if err != nil {
		return nil, err
	}
	b := &Build{Repo: g.Repo, Language: g.Language, Graph: g, Plan: plan, index: ix, opt: opt, out: out}
	st := newStubber(g, plan, ix, opt.Python)
	var blocked []map[string][]Leak
	var copies [][]string
	for i := range plan.Steps {
		files, cp, bl, err := st.state(plan.Stubbed(i + 1))
		if err != nil {
			return nil, fmt.Errorf("skeleton of step %d: %w", i+1, err)
		}
		b.States = append(b.States, files)
		copies, blocked = append(copies, cp), append(blocked, bl)
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
				after[f] = st.original(f)
			}
		}
		patch, err := gitDiff(ctx, skel, after)
		if err != nil {
			return nil, fmt.Errorf("reference patch of step %d: %w", s.N, err)
		}
		t := StepTask{Step: s.N, Language: g.Language, FailToPass: s.Tests, PassToPass: plan.PassToPass(s.N),
			Files: files, Merged: s.Merged, Copies: copies[i]}
		for _, id := range s.Nodes {
			t.Nodes = append(t.Nodes, st.byID[id])
		}
		decls, err := skeletonDecls(g.Language, opt.Python, ix, skel, t.Nodes)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", s.N, err)
		}
		b.decls = append(b.decls, decls)
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
		req, err := b.writeRequirement(ctx, &t, decls)
		if err != nil {
			return nil, err
		}
		t.Leaks = st.leaks(t.Nodes, skel, blocked[i], req)
		if err := WriteJSON(filepath.Join(dir, "task.json"), t); err != nil {
			return nil, err
		}
		b.Tasks = append(b.Tasks, t)
	}
	opt.Log.Info("built steps", zap.Int("steps", len(b.Tasks)))
	return b, nil
}

// writeRequirement writes t's requirement document (template or model)
// and returns its text.
func (b *Build) writeRequirement(ctx context.Context, t *StepTask, decls []funcDef) (string, error) {
	req, by, err := requirement(ctx, b.opt.Model, filepath.Join(b.out, "requirements-cache"), b.Graph, *t, decls)
	if err != nil {
		return "", err
	}
	t.RequirementBy = by
	if err := os.WriteFile(t.Requirement, []byte(req), 0o644); err != nil {
		return "", fmt.Errorf("write requirement: %w", err)
	}
	return req, nil
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
