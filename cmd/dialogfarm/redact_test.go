package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/redact"
)

// TestRedactCommand runs `dialogfarm redact` on a folder with a .netrc, a
// UTF-16 file and a split secret: the copy holds none of them, the JSON
// report and the summary name file, line, kind and placeholder and hold
// no secret, and an existing or nested --out is refused.
func TestRedactCommand(t *testing.T) {
	netrc := "Xk9#mP2$qLw7"
	stripe := "4eC39HqLyjWDarjtT1zdp7dcFAKE"
	aws := "AKIA" + "QYLPMN5HHHFPZAM2"
	src := t.TempDir()
	utf16 := []byte{0xFF, 0xFE}
	for _, r := range "[default]\naws_access_key_id = " + aws + "\n" {
		utf16 = append(utf16, byte(r), 0)
	}
	for name, data := range map[string][]byte{
		".netrc":        []byte("machine api.example.com login alice password " + netrc + "\n"),
		"creds.ini":     utf16,
		"app/keys.js":   []byte("// keys\nconst key = \"sk_live_\" + \"" + stripe + "\";\n"),
		".git/config":   []byte("[core]\n"),
		"README.md":     []byte("# app\n"),
		"app/readme.md": []byte("nothing here\n"),
	} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(t.TempDir(), "copy")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"redact", src, "--out", dst}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var c redact.Copy
	data, err := os.ReadFile(dst + ".redactions.json")
	if err != nil || json.Unmarshal(data, &c) != nil {
		t.Fatalf("report: %v", err)
	}
	summary, err := os.ReadFile(dst + ".redactions.txt")
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"stdout": out.String(), "report": string(data), "summary": string(summary)} {
		for _, s := range []string{netrc, stripe, aws} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds a secret", where)
			}
		}
	}
	if c.Files != 5 || c.Decoded != 1 || c.Stats.Secrets != 3 || len(c.Redacted) != 3 {
		t.Errorf("report %+v", c)
	}
	for _, want := range []string{".netrc (utf-8)\n  line 1    netrc-password", "creds.ini (utf-16le-bom)\n  line 2    aws-access-token             REDACTED_AWS_ACCESS_TOKEN_1",
		"app/keys.js (utf-8)\n  line 2    stripe-access-token          REDACTED_STRIPE_ACCESS_TOKEN_1"} {
		if !strings.Contains(string(summary), want) || !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	js, err := os.ReadFile(filepath.Join(dst, "app/keys.js"))
	if err != nil || !strings.Contains(string(js), `const key = "REDACTED_STRIPE_ACCESS_TOKEN_1" + "";`) {
		t.Errorf("copy of keys.js: %q (%v)", js, err)
	}
	if _, err := os.Stat(filepath.Join(dst, ".git")); err == nil {
		t.Error(".git was copied")
	}

	// An existing --out is kept unless --force; --out inside SRC is refused.
	err = run(context.Background(), []string{"redact", src, "--out", dst}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("existing --out: %v", err)
	}
	if err := run(context.Background(), []string{"redact", src, "--out", dst, "--force"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Errorf("--force: %v", err)
	}
	err = run(context.Background(), []string{"redact", src, "--out", filepath.Join(src, "copy")}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "must not hold one another") {
		t.Errorf("--out inside SRC: %v", err)
	}
	err = run(context.Background(), []string{"redact", filepath.Join(src, "missing"), "--out", filepath.Join(t.TempDir(), "x")}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing SRC: %v", err)
	}
}
