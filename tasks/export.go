package tasks

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dialogfarm/dialog"
	"dialogfarm/profiles"
)

// Instance is one SWE-bench-style task: apply Patch to the skeleton (the
// repository at BaseCommit with SkeletonFiles laid over it, or the
// materialized Workspace) and FailToPass must go from failing to passing
// while PassToPass keep passing.
//
// Repo, SkeletonFiles and Workspace are relative to the folder that holds
// instances.jsonl (slash-separated), so the folder can be moved or shipped
// whole; Repo only records where the tasks came from (the workspace is a
// full copy). Files written before this rule had Repo absolute and the
// other two relative to the directory the tool ran in: InstancePath reads
// both.
type Instance struct {
	InstanceID    string   `json:"instance_id"`
	Repo          string   `json:"repo"`
	Language      string   `json:"language"`
	Step          int      `json:"step"`
	BaseCommit    string   `json:"base_commit,omitempty"`
	SkeletonFiles string   `json:"skeleton_files"` // overlay dir of the files that differ from base_commit
	Workspace     string   `json:"workspace,omitempty"`
	Patch         string   `json:"patch"`
	FailToPass    []string `json:"FAIL_TO_PASS"`
	// PassToPass includes the vacuous fail-to-pass tests: they pass on the
	// skeleton and with the patch.
	PassToPass       []string `json:"PASS_TO_PASS"`
	VacuousDropped   []string `json:"vacuous_dropped,omitempty"` // passed on the skeleton; not in FAIL_TO_PASS
	ProblemStatement string   `json:"problem_statement"`
	Functions        []string `json:"functions"`
	Nodes            []string `json:"nodes,omitempty"` // graph node ids of Functions, in the same order
}

// InstancePath resolves a path field of an instance read from
// instances.jsonl in dir: absolute paths as they are, paths relative to
// dir (this format), and, for files of the older format, paths relative
// to the directory the tool ran in (tried as they are, then the part from
// "steps/" on under dir).
func InstancePath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	p = filepath.FromSlash(p)
	if in := filepath.Join(dir, p); exists(in) {
		return in
	}
	if exists(p) {
		abs, _ := filepath.Abs(p)
		return abs
	}
	sep := string(filepath.Separator)
	if i := strings.Index(sep+p, sep+"steps"+sep); i >= 0 {
		if in := filepath.Join(dir, p[i:]); exists(in) {
			return in
		}
	}
	return filepath.Join(dir, p)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ExportOptions configures Export.
type ExportOptions struct {
	Profile *profiles.Profile // query style and locale; nil: terse English
	// Materialize writes a full skeleton copy of the repository per
	// exported step (steps/step-N/workspace), the tree drive opens.
	Materialize bool
}

// ExportResult counts what Export wrote.
type ExportResult struct {
	Instances int
	Configs   int
}

// Export writes instances.jsonl and configs.jsonl under out for the steps
// that passed the audit. Chat configs are made for steps whose functions
// sit in one file (at most three): the skeleton file is opened with the
// cursor in the first stub (or the stub selected), and the query asks for
// every function of the step in the profile's style and locale. A step
// whose audit found vacuous fail-to-pass tests gets its requirement
// written again without them (they join pass-to-pass).
func Export(ctx context.Context, b *Build, a *Audit, out string, opt ExportOptions) (ExportResult, error) {
	var res ExportResult
	base := gitHead(ctx, b.Repo)
	name := filepath.Base(b.Repo)
	absOut, err := filepath.Abs(out)
	if err != nil {
		return res, err
	}
	rel := func(p string) (string, error) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		r, err := filepath.Rel(absOut, abs)
		if err != nil {
			return "", fmt.Errorf("path %s relative to %s: %w", p, out, err)
		}
		return filepath.ToSlash(r), nil
	}
	repo, err := rel(b.Repo)
	if err != nil {
		return res, err
	}
	var insts []Instance
	var cfgs []dialog.ChatConfig
	for i, t := range b.Tasks {
		sa := a.Steps[i]
		if !sa.Passed {
			continue
		}
		patch, err := os.ReadFile(t.Patch)
		if err != nil {
			return res, err
		}
		skel, err := rel(t.SkeletonDir)
		if err != nil {
			return res, err
		}
		inst := Instance{InstanceID: fmt.Sprintf("%s__step-%03d", name, t.Step), Repo: repo, Language: b.Language, Step: t.Step,
			BaseCommit: base, SkeletonFiles: skel, Patch: string(patch), VacuousDropped: sa.Vacuous}
		for _, id := range t.FailToPass {
			if !slices.Contains(sa.Vacuous, id) {
				inst.FailToPass = append(inst.FailToPass, id)
			}
		}
		inst.PassToPass = slices.Sorted(slices.Values(slices.Concat(t.PassToPass, sa.Vacuous)))
		if len(sa.Vacuous) > 0 {
			t.FailToPass, t.PassToPass = inst.FailToPass, inst.PassToPass
			if _, err := b.writeRequirement(ctx, &t, b.decls[i]); err != nil {
				return res, err
			}
		}
		req, err := os.ReadFile(t.Requirement)
		if err != nil {
			return res, err
		}
		inst.ProblemStatement = string(req)
		for _, n := range t.Nodes {
			inst.Functions = append(inst.Functions, n.Name)
			inst.Nodes = append(inst.Nodes, n.ID)
		}
		if opt.Materialize {
			ws := filepath.Join(filepath.Dir(t.SkeletonDir), "workspace")
			if inst.Workspace, err = rel(ws); err != nil {
				return res, err
			}
			if err := os.RemoveAll(ws); err != nil {
				return res, err
			}
			if err := copyTree(b.Repo, ws); err != nil {
				return res, fmt.Errorf("materialize step %d: %w", t.Step, err)
			}
			if err := writeFiles(ws, b.States[i]); err != nil {
				return res, err
			}
			if c, ok := chatConfig(b, i, inst, ws, opt.Profile); ok {
				cfgs = append(cfgs, c)
				tc, err := testsConfig(b, i, c, opt.Profile)
				if err != nil {
					return res, err
				}
				cfgs = append(cfgs, tc)
			}
		}
		insts = append(insts, inst)
	}
	if err := writeJSONL(filepath.Join(out, "instances.jsonl"), insts); err != nil {
		return res, err
	}
	if err := writeJSONL(filepath.Join(out, "configs.jsonl"), cfgs); err != nil {
		return res, err
	}
	return ExportResult{Instances: len(insts), Configs: len(cfgs)}, nil
}

func writeJSONL[T any](path string, rows []T) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func gitHead(ctx context.Context, repo string) string {
	res, err := runCmd(ctx, repo, nil, 0, "git", "rev-parse", "HEAD")
	if err != nil || res.ExitCode != 0 {
		return ""
	}
	return strings.TrimSpace(res.Output)
}
