package judge

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"dialogfarm/dialog"
)

// Rules fired by an Executor (they never fire from reading the answer).
const (
	RuleTestsFail    = "tests_fail"
	RuleDoesNotBuild = "does_not_build"
)

// Executor runs an answer against the tests of the task its dialogue was
// made from (the tasks stage's execution judge implements it). It returns
// nil when it has nothing to say about the dialogue or intent.
type Executor interface {
	Execute(ctx context.Context, configID, intent, answer string) (*dialog.Execution, error)
}

// WithExecutor makes j run every answer through e; an answer whose tests
// fail or that does not build gets the tests_fail or does_not_build
// deduction, so only answers that pass can score 5. The verdict records
// the run (Verdict.Execution).
func (j *Judge) WithExecutor(e Executor) *Judge {
	j.exec = e
	return j
}

// executed adds the execution's deduction to v.
func (j *Judge) executed(ctx context.Context, s Subject, answer string, v *dialog.Verdict) error {
	if j.exec == nil {
		return nil
	}
	ex, err := j.exec.Execute(ctx, s.ConfigID, s.Intent, answer)
	if err != nil {
		return fmt.Errorf("execute the answer against its task's tests: %w", err)
	}
	if ex == nil {
		return nil
	}
	v.Execution = ex
	rule := ""
	switch {
	case !ex.Built:
		rule = RuleDoesNotBuild
	case !ex.Passed:
		rule = RuleTestsFail
	default:
		return nil
	}
	i := slices.IndexFunc(j.rules, func(r Rule) bool { return r.Name == rule })
	if i < 0 { // disabled in the config
		return nil
	}
	reason := firstLines(ex.Output, 3)
	if rule == RuleTestsFail {
		reason = fmt.Sprintf("%d tests run, not all pass: %s", len(ex.Tests), reason)
	}
	v.Deductions = append(v.Deductions, dialog.Deduction{Rule: rule, Weight: j.rules[i].Weight, Reason: reason})
	return nil
}

func firstLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.TrimSpace(l) != "" && len(out) < n {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return strings.Join(out, " | ")
}

// executedOnly is the Check of the rules an Executor fires.
func executedOnly(Subject, string) (string, bool) { return "", false }
