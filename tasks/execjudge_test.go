package tasks

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/judge"
)

// execJudgeFor builds, audits and exports a fixture and loads the execution
// judge on the result.
func execJudgeFor(t *testing.T, g *Graph) *ExecJudge {
	t.Helper()
	_, _, out := exported(t, g)
	return loadExecJudge(t, out)
}

type answerCase struct {
	name, answer string
	wantScore    float64
	wantRule     string // "" for none
	wantOutput   string // substring of the recorded test output
}

func judgeAnswers(t *testing.T, ej *ExecJudge, configID, intent, lang string, cases []answerCase) {
	t.Helper()
	j, err := judge.New(judge.DefaultConfig(), nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	j.WithExecutor(ej)
	s := judge.Subject{Intent: intent, Language: lang, Locale: "en", ConfigID: configID,
		Messages: []dialog.Message{{Role: "user", Content: "Please implement the function so that its tests pass."}}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs, err := j.Judge(context.Background(), s, []dialog.Candidate{{Member: "m", Text: c.answer}})
			if err != nil {
				t.Fatal(err)
			}
			v := vs[0]
			var rules []string
			for _, d := range v.Deductions {
				rules = append(rules, d.Rule)
			}
			if v.Score != c.wantScore || (c.wantRule == "") != (len(rules) == 0) || (c.wantRule != "" && !strings.Contains(strings.Join(rules, ","), c.wantRule)) {
				t.Errorf("score %v deductions %v, want %v with %q", v.Score, v.Deductions, c.wantScore, c.wantRule)
			}
			if v.Execution == nil || !strings.Contains(v.Execution.Output, c.wantOutput) {
				t.Errorf("execution %+v does not record %q", v.Execution, c.wantOutput)
			}
		})
	}
}

func TestExecJudgePython(t *testing.T) {
	ej := execJudgeFor(t, tracePyFixture(t))
	judgeAnswers(t, ej, "pyfix__step-004", vocab.IntentGenerate, LangPython, []answerCase{
		{"correct", "Here is the implementation:\n\n```python\ndef scale(x, k):\n    \"\"\"Multiply x by k.\"\"\"\n    return x * k\n```\n", 5, "", "passed"},
		{"wrong", "Here is the implementation:\n\n```python\ndef scale(x, k):\n    \"\"\"Multiply x by k.\"\"\"\n    return x + k\n```\n", 2, judge.RuleTestsFail, "assert 5 == 6"},
		{"broken", "Here is the implementation:\n\n```python\nimport no_such_module_xyz\n\ndef scale(x, k):\n    return x * k\n```\n", 1, judge.RuleDoesNotBuild, "no_such_module_xyz"},
	})
	// tests intent: the answer's tests must pass on the reference and
	// fail on the stub
	judgeAnswers(t, ej, "pyfix__step-004__tests", vocab.IntentTests, LangPython, []answerCase{
		{"tests that test", "Here are tests for scale:\n\n```python\nfrom pyfix.util import scale\n\n\ndef test_scale_multiplies():\n    assert scale(2, 3) == 6\n    assert scale(0, 5) == 0\n```\n", 5, "", "passed"},
		{"tests that fail", "Here are tests for scale:\n\n```python\nfrom pyfix.util import scale\n\n\ndef test_scale_multiplies():\n    assert scale(2, 3) == 7\n```\n", 2, judge.RuleTestsFail, "assert 6 == 7"},
		{"tests that test nothing", "Here are tests for scale:\n\n```python\nfrom pyfix.util import scale\n\n\ndef test_scale_exists():\n    assert callable(scale)\n```\n", 2, judge.RuleTestsFail, "do not test it"},
	})
}

func TestExecJudgeGo(t *testing.T) {
	ej := execJudgeFor(t, traceGoFixture(t))
	judgeAnswers(t, ej, "gofix__step-005", vocab.IntentGenerate, LangGo, []answerCase{
		{"correct", "Both functions:\n\n```go\nfunc (s Square) Area() int { return s.S * s.S }\n\nfunc Describe(s Shape) string {\n\treturn fmt.Sprintf(\"area %d\", s.Area())\n}\n```\n", 5, "", "PASS"},
		{"wrong", "Both functions:\n\n```go\nfunc (s Square) Area() int { return s.S + s.S }\n\nfunc Describe(s Shape) string {\n\treturn fmt.Sprintf(\"area %d\", s.Area())\n}\n```\n", 2, judge.RuleTestsFail, "Describe = \"area 6\""},
		{"does not build", "Both functions:\n\n```go\nfunc (s Square) Area() int { return \"nine\" }\n\nfunc Describe(s Shape) string {\n\treturn fmt.Sprintf(\"area %d\", s.Area())\n}\n```\n", 1, judge.RuleDoesNotBuild, "cannot use \"nine\""},
	})
	judgeAnswers(t, ej, "gofix__step-005__tests", vocab.IntentTests, LangGo, []answerCase{
		{"tests that test", "A test:\n\n```go\nfunc TestDescribeSquare(t *testing.T) {\n\tif got := shapes.Describe(shapes.Square{S: 2}); got != \"area 4\" {\n\t\tt.Fatalf(\"got %q\", got)\n\t}\n}\n```\n", 5, "", "PASS"},
	})
}
