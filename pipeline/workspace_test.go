package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
	"dialogfarm/redact"
)

// TestSanitiseConfigs covers hand-written configs: their repository is
// replaced by a sanitised copy in the run folder and their queries are
// redacted with the placeholders of that copy; a second call (a resumed
// drive) reuses the copy and gives the same configs.
func TestSanitiseConfigs(t *testing.T) {
	ctx, log := context.Background(), zaptest.NewLogger(t)
	repo, err := filepath.Abs("../redact/testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	token := "ghp_" + "sMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8" // planted in app/cloud.go
	other := "glpat-" + "Zr4Kq9Tx2Wm7Lp3Vn8Yb"               // in no file
	configs := []dialog.ChatConfig{
		{ID: "a", Repo: repo, File: "app/cloud.go", Turns: []dialog.TurnSpec{{Query: "why is " + token + " rejected?"}, {Query: "and " + other + "?"}}},
		{ID: "b", Repo: "../redact/testdata/corpus", File: "web/notify.js", Turns: []dialog.TurnSpec{{Query: "explain this"}}},
	}
	out := t.TempDir()
	newRedactor := func() *redact.Redactor {
		r, err := redactor(nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	got, err := sanitiseConfigs(ctx, newRedactor(), out, configs, log)
	if err != nil {
		t.Fatal(err)
	}
	copyDir := filepath.Join(out, WorkspaceDir, "corpus")
	if got[0].Repo != copyDir || got[1].Repo != copyDir {
		t.Fatalf("repos %q, %q; want %q", got[0].Repo, got[1].Repo, copyDir)
	}
	if configs[0].Turns[0].Query != "why is "+token+" rejected?" {
		t.Error("the caller's configs were changed")
	}
	q := got[0].Turns[0].Query
	if q != "why is REDACTED_GITHUB_PAT_1 rejected?" || strings.Contains(got[0].Turns[1].Query, other) {
		t.Errorf("queries %q, %q", q, got[0].Turns[1].Query)
	}
	src, err := os.ReadFile(filepath.Join(copyDir, "app/cloud.go"))
	if err != nil || !strings.Contains(string(src), `"REDACTED_GITHUB_PAT_1"`) || strings.Contains(string(src), token) {
		t.Errorf("copy of app/cloud.go does not use the query's placeholder (%v)", err)
	}
	rs, err := redact.ReadRedactions(filepath.Join(out, RedactionsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Repos) != 1 || rs.Queries.Secrets != 1 || rs.Total.Secrets != rs.Repos[0].Stats.Secrets+1 {
		t.Errorf("redactions %+v", rs)
	}
	data, _ := os.ReadFile(filepath.Join(out, RedactionsFile))
	if strings.Contains(string(data), token) {
		t.Error("redactions.json holds a secret")
	}

	again, err := sanitiseConfigs(ctx, newRedactor(), out, configs, log)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Turns[0].Query != q || again[0].Repo != copyDir {
		t.Errorf("resumed: %+v", again[0])
	}
	// Configs already pointing at the copy are used as they are.
	same, err := sanitiseConfigs(ctx, newRedactor(), out, got, log)
	if err != nil || same[0].Repo != copyDir {
		t.Errorf("configs on the copy: %v %q", err, same[0].Repo)
	}
}

// TestSanitiseReposRelativeOut: with a relative run folder (make demo's
// --out out/demo), the copy the configs stage made is known as a copy by
// the drive stage, which used to copy it again (workspace/corpus-2).
func TestSanitiseReposRelativeOut(t *testing.T) {
	ctx, log := context.Background(), zaptest.NewLogger(t)
	repo, err := filepath.Abs("../redact/testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	r, err := redactor(nil)
	if err != nil {
		t.Fatal(err)
	}
	copies, err := sanitiseRepos(ctx, r, "run", []string{repo}, log)
	if err != nil {
		t.Fatal(err)
	}
	configs, err := sanitiseConfigs(ctx, r, "run", []dialog.ChatConfig{{ID: "a", Repo: copies[0], File: "app/cloud.go",
		Turns: []dialog.TurnSpec{{Query: "q"}}}}, log)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join("run", WorkspaceDir))
	if len(entries) != 1 || configs[0].Repo != copies[0] || !filepath.IsAbs(copies[0]) {
		t.Errorf("workspace holds %v; configs on %q, copy %q", entries, configs[0].Repo, copies[0])
	}
}
