package analyst

import "testing"

func TestQueryStyle(t *testing.T) {
	tests := map[string]struct{ query, want string }{
		"terse":        {"why null here?", "terse"},
		"normal":       {"Can you explain what this function returns when the list is empty?", "normal"},
		"verbose":      {"I have been debugging this for a while and I think the problem is in the way the cache is invalidated after a write, because readers sometimes see stale data even though the write already returned successfully to the caller.", "verbose"},
		"terse code":   {"fix this\n```\nx = 1\n```", "terse_code"},
		"pasted lines": {"what is wrong with this code, it never returns the right value\nfor (let i = 0; i < n; i++) {\n  total += a[i];\n}", "normal_code"},
		"cjk terse":    {"这个函数是做什么的", "terse"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := QueryStyle(tt.query); got != tt.want {
				t.Errorf("QueryStyle = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCursorRules(t *testing.T) {
	yes, no := true, false
	tests := map[string]struct {
		rec  Record
		want string
	}{
		"no selection in function": {Record{InFunction: &yes}, "inside_function"},
		"no selection outside":     {Record{InFunction: &no}, "idle"},
		"single line":              {Record{Selection: Selection{Present: true, Lines: 1}}, "single_line"},
		"matches function size":    {Record{Selection: Selection{Present: true, Lines: 9}, FunctionLines: 10}, "whole_function"},
		"whole file":               {Record{Selection: Selection{Present: true, Lines: 99}, FileLines: 100}, "whole_file"},
		"partial":                  {Record{Selection: Selection{Present: true, Lines: 4}, FunctionLines: 20}, "partial_block"},
		"python def text":          {Record{Selection: parseSelection("def f(x):\n    return x\n")}, "whole_function"},
		"go func text":             {Record{Selection: parseSelection("func F() int {\n\treturn 1\n}")}, "whole_function"},
		"java method text":         {Record{Selection: parseSelection("public int count(String sku) {\n  return 1;\n}")}, "whole_function"},
		"unbalanced text":          {Record{Selection: parseSelection("func F() int {\n\treturn 1\n")}, "partial_block"},
		"chars only":               {Record{Selection: Selection{Present: true, Chars: 200}}, "partial_block"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var d []string
			if got := cursorOf(tt.rec, &d); got != tt.want {
				t.Errorf("cursorOf = %q, want %q", got, tt.want)
			}
		})
	}
}
