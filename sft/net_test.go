package sft

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"dialogfarm/dialog"
)

// TestSafetyNet drops the samples in which a secret is still found, counts
// them per rule, and keeps the others (placeholders included) unchanged.
func TestSafetyNet(t *testing.T) {
	aws := "AKIA" + "454ML6LG4TJFCZ4K"
	code := "func f() int {\n\treturn 1\n}"
	dialogues := []dialog.Dialogue{
		build(t, "clean", "explain", "go", "en", turn{user: userMsg("a.go", "go", code, "Explain."), answer: "It returns 1.", score: 5, rival: 3}),
		build(t, "placeholder", "explain", "go", "en", turn{user: userMsg("a.go", "go", `key := "REDACTED_AWS_ACCESS_TOKEN_1"`, "Explain."), answer: "A key.", score: 5, rival: 3}),
		build(t, "in-user", "explain", "go", "en", turn{user: userMsg("a.go", "go", `key := "`+aws+`"`, "Explain."), answer: "A key.", score: 5, rival: 3}),
		build(t, "in-answer", "explain", "go", "en", turn{user: userMsg("a.go", "go", code, "Explain."), answer: "Use token ghp_" + "sMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8 here.", score: 5, rival: 3}),
	}
	var in bytes.Buffer
	for _, d := range dialogues {
		line, _ := json.Marshal(d)
		in.Write(append(line, '\n'))
	}
	opt := DefaultOptions()
	opt.Meta = MetaNone
	var out bytes.Buffer
	sum, err := Export(&in, &out, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 2 || sum.Skipped[SkipSecret] != 2 {
		t.Errorf("summary %+v, want 2 records and 2 dropped", sum)
	}
	if sum.SecretRules["aws-access-token"] != 1 || sum.SecretRules["github-pat"] != 1 || len(sum.SecretRules) != 2 {
		t.Errorf("per rule %v", sum.SecretRules)
	}
	if strings.Contains(out.String(), aws) || strings.Contains(out.String(), "ghp_") || !strings.Contains(out.String(), "REDACTED_AWS_ACCESS_TOKEN_1") {
		t.Errorf("export:\n%s", out.String())
	}
}
