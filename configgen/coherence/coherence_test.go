package coherence

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

func rules(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return out
}

const medianSel = `def median(values):
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2 == 1:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2`

// TestIssueExamples: the three incoherent queries issue 41 saw, as the
// old templates wrote them, are found; the same situations written
// coherently are not.
func TestIssueExamples(t *testing.T) {
	format := readFile(t, "../../examples/sample-repo/web/format.ts")
	report := readFile(t, "../../examples/sample-repo/pycalc/report.py")
	calcCtx := Context{File: "pycalc/calc.py", Shown: medianSel, Files: map[string]string{"pycalc/report.py": report}}
	formatCtx := Context{File: "web/format.ts", Shown: format}
	tests := []struct {
		name  string
		query string
		ctx   Context
		want  []string
	}{
		{"tests query names report.py and pastes the selection again",
			"Write unit tests for calc.py, report.py, covering the normal case and the edge cases.\n\nHere is the code:\n```python\n" + medianSel + "\n```",
			calcCtx, []string{RuleFile, RuleDuplicate}},
		{"refactor query about a CSV parser while format.ts is open",
			"How should I structure TypeScript code that parses a CSV file so it stays maintainable?",
			formatCtx, []string{RuleTerm}},
		{"the same in Chinese", "TypeScript 里“解析 CSV 文件”这样的代码应该怎么组织才好维护？", formatCtx, []string{RuleTerm}},
		{"a function the lines shown do not hold", "Can you explain what the `stddev` function does?", calcCtx, []string{RuleSymbol}},
		{"bare identifiers too", "why does median call compute_total() twice?", calcCtx, []string{RuleSymbol}},
		{"coherent: the open file and the selection", "Write unit tests for `median` in calc.py, covering the edge cases.", calcCtx, nil},
		{"coherent: report.py quoted, not the selection",
			"Write tests for this. It's used like this in report.py:\n```python\n" + firstLines(report, 6) + "\n```",
			calcCtx, nil},
		{"coherent: a term the code shows", "why does formatMoney build a new Intl.NumberFormat each call?", formatCtx, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckQuery(tt.query, tt.ctx)
			if !slices.Equal(rules(got), tt.want) {
				t.Errorf("findings %v, want rules %v", got, tt.want)
			}
		})
	}
}

// firstLines returns the first n lines of text that are not blank.
func firstLines(text string, n int) string {
	var out []string
	for l := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(l) != "" && len(out) < n {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestRules(t *testing.T) {
	ctx := Context{File: "src/queue.go", Shown: "func (q *Queue) Push(v int) {\n\tq.mu.Lock()\n\tdefer q.mu.Unlock()\n\tq.items = append(q.items, v)\n}"}
	tests := []struct {
		query string
		want  []string
	}{
		{"what does `Push` do?", nil},
		{"is q.mu.Lock() needed here?", nil},
		{"what does `Pop` do?", []string{RuleSymbol}},
		{"给 `Pop` 写测试", []string{RuleSymbol}},
		{"why not use sync.RWMutex?", []string{RuleSymbol}},
		{"does queue.go need a JSON tag?", []string{RuleTerm}},
		{"check queue_test.go too", []string{RuleFile}},
		{"queue.go 里这段代码是干什么的？", nil},
		{"is this OK? LGTM otherwise", nil},
		{"can I use this from JavaScript or Node.js?", nil},
		{"see https://example.com/a_b_c.go for why", nil},
		{"fix this\n```go\nq.items = append(q.items, v)\n```", []string{RuleDuplicate}},
		{"fix this\n\tq.mu.Lock()\n\tdefer q.mu.Unlock()", []string{RuleDuplicate}},
		{"it is called as\n```go\nq.Push(3)\nq.Push(4)\n```\nand\n```go\nq.Push(3)\nq.Push(4)\n```", []string{RuleDuplicate}},
		{"callers do\n```go\nfor _, v := range vals {\n\tq.Push(v)\n}\n```\nis `vals` ok?", nil},
	}
	for _, tt := range tests {
		got := CheckQuery(tt.query, ctx)
		if !slices.Equal(rules(got), tt.want) {
			t.Errorf("%q: findings %v, want rules %v", tt.query, got, tt.want)
		}
	}
}

func TestFollowUp(t *testing.T) {
	explain := Turn{Intent: "explain", Answer: "It returns the middle value of the sorted list."}
	fix := Turn{Intent: "fix", Answer: "Here is the fix:\n```python\nreturn sorted(v)[len(v)//2]\n```"}
	gen := Turn{Intent: "generate", Answer: "```python\ndef f(): pass\n```"}
	tests := []struct {
		name     string
		prev     Turn
		text     string
		declared Needs
		findings int
	}{
		{"zh compare after explain (issue 41)", explain, "为什么这样比原来的好？", Needs{}, 1},
		{"en compare after explain", explain, "Why is that better than the original?", Needs{}, 1},
		{"es compare after explain", explain, "¿Por qué es mejor que el original?", Needs{}, 1},
		{"compare after a fix with code", fix, "Why is that better than the original?", Needs{}, 0},
		{"compare after new code changes nothing", gen, "Is this faster than the original?", Needs{}, 1},
		{"your code after prose", explain, "Can you write tests for your version?", Needs{}, 1},
		{"declared code need after prose", explain, "Can you make it shorter?", Needs{AnswerCode: true}, 1},
		{"declared code need met", gen, "Can you make it shorter?", Needs{AnswerCode: true}, 0},
		{"more detail after explain", explain, "Can you go into more detail on that?", Needs{}, 0},
	}
	for _, tt := range tests {
		if got := CheckFollowUp(tt.prev, tt.text, tt.declared); len(got) != tt.findings {
			t.Errorf("%s: findings %v, want %d", tt.name, got, tt.findings)
		}
	}
}
