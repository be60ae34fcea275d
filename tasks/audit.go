package tasks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/zap"
)

// StepAudit is the three-state check of one step.
type StepAudit struct {
	Step int `json:"step"`
	// Skeleton state: pass-to-pass must pass, fail-to-pass must fail with
	// the stub's own error.
	P2PFailed []string `json:"p2p_failed,omitempty"`
	F2PStub   int      `json:"f2p_stub_fail"`
	// MissedEdges: tests that did not build, collect or import on the
	// skeleton (a dependency the trace did not see).
	MissedEdges []string `json:"missed_edges,omitempty"`
	WrongError  []string `json:"f2p_wrong_error,omitempty"`
	// Vacuous fail-to-pass tests pass on the skeleton.
	Vacuous []string `json:"vacuous_f2p,omitempty"`
	// Reference state: the patch applies (git apply --check) and gives the
	// next state byte for byte; every test passes.
	PatchApplies bool     `json:"patch_applies"`
	PatchExact   bool     `json:"patch_exact"`
	GoldFailed   []string `json:"gold_failed,omitempty"`
	// Original state: every test passes in each run.
	OriginalFailed []string `json:"original_failed,omitempty"`
	// Leaks: the step's function bodies still found in its skeleton
	// workspace or requirement (see Leak).
	Leaks   []Leak   `json:"leaks,omitempty"`
	Passed  bool     `json:"passed"`
	Reasons []string `json:"reasons,omitempty"`
	// Outputs of failing runs, by state and test, for the reader.
	Outputs map[string]string `json:"outputs,omitempty"`
}

// Audit is the audit of every step, with totals.
type Audit struct {
	Repo          string      `json:"repo"`
	Language      string      `json:"language"`
	Steps         []StepAudit `json:"steps"`
	StepsTotal    int         `json:"steps_total"`
	StepsPassed   int         `json:"steps_passed"`
	VacuousF2P    int         `json:"vacuous_f2p"`
	MissedEdges   int         `json:"missed_edges"`
	Leaks         int         `json:"leaks"`
	OriginalRuns  int         `json:"original_runs"`
	OriginalFails int         `json:"original_failures"`
}

// AuditOptions configures AuditBuild.
type AuditOptions struct {
	Runs   int // original-state runs (default 3)
	Runner TestRunner
	Log    *zap.Logger
}

// AuditBuild checks every step of b in its three states.
func AuditBuild(ctx context.Context, b *Build, opt AuditOptions) (*Audit, error) {
	if opt.Runs <= 0 {
		opt.Runs = 3
	}
	if opt.Log == nil {
		opt.Log = zap.NewNop()
	}
	a := &Audit{Repo: b.Repo, Language: b.Language, OriginalRuns: opt.Runs}
	var all []string
	for _, s := range b.Plan.Steps {
		all = append(all, s.Tests...)
	}
	all = append(all, b.Plan.Scaffold...)
	allTests, err := testsByID(b.Graph, all)
	if err != nil {
		return nil, err
	}
	origFail := map[string]bool{}
	for r := 0; r < opt.Runs; r++ {
		res, err := opt.Runner.Run(ctx, nil, allTests)
		if err != nil {
			return nil, fmt.Errorf("original run %d: %w", r+1, err)
		}
		opt.Log.Info("audit: original run", zap.Int("run", r+1), zap.Int("tests", len(allTests)))
		for id, tr := range res {
			if tr.Outcome != OutcomePass {
				origFail[id] = true
			}
		}
	}
	a.OriginalFails = len(origFail)
	// state i's results are needed as step i's skeleton and step i-1's gold
	results := make([]map[string]TestRun, len(b.States))
	for i := range b.States {
		var ids []string
		if i < len(b.Tasks) {
			ids = slices.Concat(b.Tasks[i].FailToPass, b.Tasks[i].PassToPass)
		}
		if i > 0 {
			ids = slices.Concat(ids, b.Tasks[i-1].FailToPass, b.Tasks[i-1].PassToPass)
		}
		slices.Sort(ids)
		ts, err := testsByID(b.Graph, slices.Compact(ids))
		if err != nil {
			return nil, err
		}
		if results[i], err = opt.Runner.Run(ctx, b.States[i], ts); err != nil {
			return nil, fmt.Errorf("run state %d: %w", i+1, err)
		}
		opt.Log.Info("audit: state run", zap.Int("state", i+1), zap.Int("of", len(b.States)), zap.Int("tests", len(ts)))
	}
	for i, t := range b.Tasks {
		sa := StepAudit{Step: t.Step, Outputs: map[string]string{}, Leaks: t.Leaks}
		skel, gold := results[i], results[i+1]
		for _, id := range t.PassToPass {
			if r := skel[id]; r.Outcome != OutcomePass {
				sa.P2PFailed = append(sa.P2PFailed, id)
				sa.Outputs["skeleton "+id] = r.Output
				if r.Outcome == OutcomeBuildError {
					sa.MissedEdges = append(sa.MissedEdges, id)
				}
			}
		}
		for _, id := range t.FailToPass {
			switch r := skel[id]; r.Outcome {
			case OutcomeStub:
				sa.F2PStub++
			case OutcomePass:
				sa.Vacuous = append(sa.Vacuous, id)
			case OutcomeBuildError:
				sa.MissedEdges = append(sa.MissedEdges, id)
				sa.Outputs["skeleton "+id] = r.Output
			default:
				sa.WrongError = append(sa.WrongError, id)
				sa.Outputs["skeleton "+id] = r.Output
			}
		}
		sa.PatchApplies, sa.PatchExact, err = checkPatch(ctx, t, b.States[i+1], b.Repo)
		if err != nil {
			return nil, err
		}
		for _, id := range slices.Concat(t.FailToPass, t.PassToPass) {
			if r := gold[id]; r.Outcome != OutcomePass {
				sa.GoldFailed = append(sa.GoldFailed, id)
				sa.Outputs["reference "+id] = r.Output
			}
			if origFail[id] {
				sa.OriginalFailed = append(sa.OriginalFailed, id)
			}
		}
		sa.judge(len(t.FailToPass))
		if len(sa.Outputs) == 0 {
			sa.Outputs = nil
		}
		a.Steps = append(a.Steps, sa)
		a.StepsTotal++
		if sa.Passed {
			a.StepsPassed++
		}
		a.VacuousF2P += len(sa.Vacuous)
		a.MissedEdges += len(sa.MissedEdges)
		a.Leaks += len(sa.Leaks)
	}
	return a, nil
}

func (sa *StepAudit) judge(nf2p int) {
	add := func(cond bool, why string) {
		if cond {
			sa.Reasons = append(sa.Reasons, why)
		}
	}
	add(len(sa.P2PFailed) > 0, "pass-to-pass tests fail on the skeleton")
	add(len(sa.MissedEdges) > 0, "tests do not build/collect on the skeleton (missed edge)")
	add(len(sa.WrongError) > 0, "fail-to-pass tests fail with another error than the stub's")
	add(nf2p > 0 && len(sa.Vacuous) == nf2p, "every fail-to-pass test passes on the skeleton (vacuous)")
	add(!sa.PatchApplies, "reference patch does not apply to the skeleton")
	add(sa.PatchApplies && !sa.PatchExact, "reference patch does not restore the next state exactly")
	add(len(sa.GoldFailed) > 0, "tests fail with the reference patch")
	add(len(sa.OriginalFailed) > 0, "tests fail on the original")
	if len(sa.Leaks) > 0 {
		var at []string
		for _, l := range sa.Leaks {
			at = append(at, l.String())
		}
		sa.Reasons = append(sa.Reasons, "leak: the solution is in the workspace: "+strings.Join(at, ", "))
	}
	sa.Passed = len(sa.Reasons) == 0
}

// checkPatch lays the skeleton's files out in a scratch directory, runs
// `git apply --check` and then `git apply`, and compares the result with
// the next state.
func checkPatch(ctx context.Context, t StepTask, next map[string][]byte, repo string) (applies, exact bool, err error) {
	dir, err := os.MkdirTemp("", "dialogfarm-apply-")
	if err != nil {
		return false, false, err
	}
	defer os.RemoveAll(dir)
	if err := os.CopyFS(dir, os.DirFS(t.SkeletonDir)); err != nil {
		return false, false, fmt.Errorf("copy skeleton: %w", err)
	}
	abs, _ := filepath.Abs(t.Patch)
	res, err := runCmd(ctx, dir, nil, 0, "git", "apply", "--check", abs)
	if err != nil || res.ExitCode != 0 {
		return false, false, err
	}
	if res, err = runCmd(ctx, dir, nil, 0, "git", "apply", abs); err != nil || res.ExitCode != 0 {
		return false, false, err
	}
	for _, f := range t.Files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return true, false, nil
		}
		want, ok := next[f]
		if !ok {
			if want, err = os.ReadFile(filepath.Join(repo, filepath.FromSlash(f))); err != nil {
				return true, false, err
			}
		}
		if !bytes.Equal(got, want) {
			return true, false, nil
		}
	}
	return true, true, nil
}

// Print writes the audit as a table.
func (a *Audit) Print(w io.Writer) {
	fmt.Fprintf(w, "%-5s %-6s %-5s %-5s %-7s %-6s %-5s %-5s %-5s %s\n", "step", "passed", "f2p", "stub", "vacuous", "missed", "patch", "gold", "leaks", "reasons")
	for _, s := range a.Steps {
		fmt.Fprintf(w, "%-5d %-6v %-5d %-5d %-7d %-6d %-5v %-5d %-5d %s\n", s.Step, s.Passed, s.F2PStub+len(s.Vacuous)+len(s.WrongError)+len(s.MissedEdges),
			s.F2PStub, len(s.Vacuous), len(s.MissedEdges), s.PatchApplies && s.PatchExact, len(s.GoldFailed), len(s.Leaks), strings.Join(s.Reasons, "; "))
	}
	fmt.Fprintf(w, "steps passing the audit: %d/%d; vacuous fail-to-pass flagged: %d; missed edges: %d; leaks: %d; original failures over %d runs: %d\n",
		a.StepsPassed, a.StepsTotal, a.VacuousF2P, a.MissedEdges, a.Leaks, a.OriginalRuns, a.OriginalFails)
}
