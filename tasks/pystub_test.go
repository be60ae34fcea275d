package tasks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const pySrc = `import functools  # kept


def deco(f):
    return f


@deco
def f(x):
    """Doc stays."""
    y = x + 1  # gone with the body
    return y


class K:
    def m(self):  # signature comment stays
        return 1


def g(): return 2`

// TestStubAndSplicePython: bodies become raise NotImplementedError with
// decorators, docstrings, comments outside the bodies and the missing final
// newline kept; splicing the answers back gives the original functions,
// and an answer without a docstring keeps the file's.
func TestStubAndSplicePython(t *testing.T) {
	nodes := []Node{{Line: 8, Name: "f"}, {Line: 16, Name: "K.m"}, {Line: 20, Name: "g"}}
	stubbed, err := stubPython("/usr/bin/python3", "m.py", []byte(pySrc), nodes)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"    y = x + 1  # gone with the body\n    return y", `    raise NotImplementedError("TODO: implement f")`,
		"        return 1", `        raise NotImplementedError("TODO: implement K.m")`,
		"def g(): return 2", `def g(): raise NotImplementedError("TODO: implement g")`,
	).Replace(pySrc)
	if d := cmp.Diff(want, string(stubbed)); d != "" {
		t.Fatalf("stubbed (-want +got):\n%s", d)
	}
	answer := "import os\n\n@deco\ndef f(x):\n    \"\"\"Doc stays.\"\"\"\n    return x + 1\n\nclass K:\n    def m(self):\n        return 1\n"
	back, err := splicePython("/usr/bin/python3", "m.py", stubbed, answer, []string{"f", "K.m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"import functools  # kept\nimport os\n", "@deco\ndef f(x):\n    \"\"\"Doc stays.\"\"\"\n    return x + 1\n", "    def m(self):\n        return 1\n", `def g(): raise NotImplementedError`} {
		if !strings.Contains(string(back), s) {
			t.Errorf("spliced file lacks %q:\n%s", s, back)
		}
	}
	// an answer without the docstring keeps the file's (the reference
	// answers of tasks check leave docstrings out)
	back, err = splicePython("/usr/bin/python3", "m.py", stubbed, "def f(x):\n    return x + 2\n", []string{"f"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "@deco\ndef f(x):\n    \"\"\"Doc stays.\"\"\"\n    return x + 2\n"; !strings.Contains(string(back), want) {
		t.Errorf("spliced file lacks %q:\n%s", want, back)
	}
	if _, err := splicePython("/usr/bin/python3", "m.py", stubbed, "def other():\n    pass\n", []string{"f"}); err == nil {
		t.Error("an answer defining none of the targets was spliced")
	}
}
