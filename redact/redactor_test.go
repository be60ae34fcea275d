package redact

import (
	"strings"
	"testing"
)

func TestRedactorStablePlaceholders(t *testing.T) {
	r := NewRedactor(testDetector(t))
	aws := "AKIA" + "454ML6LG4TJFCZ4K"
	gh := "ghp_" + "sMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8"
	a, n := r.Redact("id = \"" + aws + "\"\ntoken = \"" + gh + "\"\n")
	if n != 2 {
		t.Fatalf("replaced %d places, want 2:\n%s", n, a)
	}
	want := "id = \"REDACTED_AWS_ACCESS_TOKEN_1\"\ntoken = \"REDACTED_GITHUB_PAT_1\"\n"
	if a != want {
		t.Fatalf("got\n%s\nwant\n%s", a, want)
	}
	// The same secret in another text, in a context no rule fires on,
	// gets the same placeholder; a new secret of the same rule the next
	// ordinal.
	aws2 := "AKIA" + "Q6ZR3NWX4LTB7KME"
	b, _ := r.Redact("can you check why " + aws + " and " + aws2 + " fail?")
	if b != "can you check why REDACTED_AWS_ACCESS_TOKEN_1 and REDACTED_AWS_ACCESS_TOKEN_2 fail?" {
		t.Fatalf("got %q", b)
	}
	st := r.Stats()
	if st.Secrets != 3 || st.Occurrences != 4 || st.PerRule["aws-access-token"] != 2 || st.PerRule["github-pat"] != 1 {
		t.Errorf("stats %+v", st)
	}
	if s := st.Summary(); strings.Contains(s, aws) || !strings.Contains(s, "aws-access-token 2") {
		t.Errorf("summary %q", s)
	}
	// Placeholders are left alone when redacted text is scanned again.
	if again, n := r.Redact(a + b); n != 0 || again != a+b {
		t.Errorf("second pass replaced %d places: %q", n, again)
	}
}

// TestRedactorKeepsLines checks a multi-line secret leaves the same
// number of lines, so line numbers after it stay valid.
func TestRedactorKeepsLines(t *testing.T) {
	r := NewRedactor(testDetector(t))
	body := "Y3bucYeXN/1fcvjVHErJG20MSNQaHl7J5qA5KFSoYV7vEJ/Bv6niVjcBKI8ps9c/\n" +
		"asK2nt0sGfJkvuRipbryD9J+zxTAEe0gH4NjIK25i6sWhqKNmAEhDHc28+7FgNz8\n" +
		"Q/5dBJtNeKej67koZchRftAhEfamUto1JIcrajHX/+RYd0TV63g+lpaPib6ChWXg"
	src := "a = 1\n-----BEGIN " + "RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----\nb = 2\n"
	got, n := r.Redact(src)
	if n != 1 || strings.Count(got, "\n") != strings.Count(src, "\n") {
		t.Fatalf("%d places, %d lines, want 1 and %d:\n%s", n, strings.Count(got, "\n"), strings.Count(src, "\n"), got)
	}
	if !strings.HasPrefix(got, "a = 1\nREDACTED_PRIVATE_KEY_1\n") || !strings.HasSuffix(got, "\nb = 2\n") {
		t.Errorf("got\n%s", got)
	}
}

// TestRedactorCorpus redacts every corpus file with one Redactor: no
// planted value is left, and each planted value is one secret.
func TestRedactorCorpus(t *testing.T) {
	r := NewRedactor(testDetector(t))
	ps := readPlanted(t)
	var all strings.Builder
	walkText(t, "testdata/corpus", func(rel, text string) {
		out, _ := r.Redact(text)
		all.WriteString(out)
	})
	for _, p := range ps {
		if strings.Contains(all.String(), p.Value) {
			t.Errorf("%s: planted value left after redaction", p.Kind)
		}
	}
	if st := r.Stats(); st.Secrets != len(ps) {
		t.Errorf("%d secrets redacted, %d planted: %s", st.Secrets, len(ps), st.Summary())
	}
}

// TestRedactorSplitSecret: a secret split across literals gets one
// placeholder, written in the first piece; the other pieces become
// empty, so the line stays valid code; the joined value is remembered.
func TestRedactorSplitSecret(t *testing.T) {
	r := NewRedactor(testDetector(t))
	src := `const key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dcFAKE";` + "\n" +
		"py = ('ghp_' 'sMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8')\n" +
		"ts = `xoxb-${'781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD'}`\n"
	got, reps := r.RedactText(src)
	want := `const key = "REDACTED_STRIPE_ACCESS_TOKEN_1" + "";` + "\n" +
		"py = ('REDACTED_GITHUB_PAT_1' '')\n" +
		"ts = `REDACTED_SLACK_BOT_TOKEN_1${''}`\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if len(reps) != 3 || reps[0].Line != 1 || reps[1].Line != 2 || reps[2].Line != 3 || r.Stats().Secrets != 3 {
		t.Errorf("replacements %+v, stats %+v", reps, r.Stats())
	}
	if q, _ := r.Redact("is sk_live_4eC39HqLyjWDarjtT1zdp7dcFAKE live?"); q != "is REDACTED_STRIPE_ACCESS_TOKEN_1 live?" {
		t.Errorf("joined value not remembered: %q", q)
	}
}
