package configgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/dialog/vocab"
	"dialogfarm/redact"
)

// Secret-looking values are assembled at run time so that no literal in
// the repository looks like a credential.
func fakeSecrets() map[string]string {
	return map[string]string{
		"aws-access-key":  `key := "` + "AKIA" + "454ML6LG4TJFCZ4K" + `"`,
		"github-token":    `token: ` + "ghp_" + "sMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8",
		"openai-key":      `OPENAI = "` + "sk-" + "proj-" + "9DoV8gz4FkQ1okTBGzvAmwufUxbvJDCTbyvHNsG9eh6Yo4gf" + `"`,
		"slack-token":     `hook("` + "xoxb-" + "72803852808-414852538885-OoNZYW2mZp0zVZomHFwUbbYr" + `")`,
		"google-api-key":  `const k = "` + "AIza" + "a9SkpXz9w3QlY7Zkuvqdt7s8Stqcbnr3yBd" + `";`,
		"stripe-key":      `stripe.key = "` + "sk_" + "live_" + "EqmSM9wCZ7Uw9xfogoEmvnEN" + `"`,
		"jwt":             `auth = "` + "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0" + "." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U" + `"`,
		"url-credentials": `DSN = "postgres://admin:` + "hunter2pass" + `@db.example.com/app"`,
		"assignment":      `api_key = "` + "Zx8vQ2mN7pL4wR9t" + `"`,
	}
}

func TestDetectSecrets(t *testing.T) {
	d, err := redact.NewDetector()
	if err != nil {
		t.Fatal(err)
	}
	for kind, line := range fakeSecrets() {
		t.Run(kind, func(t *testing.T) {
			got := DetectSecrets(d, []byte("x = 1\n"+line+"\ny = 2\n"))
			if len(got) != 1 || got[0].Line != 2 {
				t.Errorf("DetectSecrets = %+v, want line 2 (%s)", got, kind)
			}
		})
	}
	t.Run("private key block", func(t *testing.T) {
		body := "Y3bucYeXN/1fcvjVHErJG20MSNQaHl7J5qA5KFSoYV7vEJ/Bv6niVjcBKI8ps9c/\nasK2nt0sGfJkvuRipbryD9J+zxTAEe0gH4NjIK25i6sWhqKNmAEhDHc28+7FgNz8"
		src := "a = 1\n-----BEGIN " + "RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----\nb = 2\n"
		got := DetectSecrets(d, []byte(src))
		if len(got) != 4 || got[0].Line != 2 || got[3].Line != 5 {
			t.Errorf("DetectSecrets = %+v, want lines 2-5", got)
		}
	})
	negatives := map[string]string{
		"placeholder":      `password = "changeme"`,
		"env lookup":       `token = os.environ["TOKEN"]`,
		"xs":               `api_key = "xxxxxxxxxxxx"`,
		"prose":            `const secretMessage = "hello world";`,
		"low entropy":      `passwordLength = "aaaaaaaa"`,
		"sk-learn":         `# use sk-learn for ML`,
		"template":         `api_key = "${API_KEY}"`,
		"plain code":       `if token == nil { return errors.New("missing token") }`,
		"url without pass": `url = "https://example.com/path?q=1"`,
	}
	for name, line := range negatives {
		t.Run("not "+name, func(t *testing.T) {
			if got := DetectSecrets(d, []byte(line+"\n")); len(got) != 0 {
				t.Errorf("DetectSecrets(%q) = %+v, want none", line, got)
			}
		})
	}
}

func TestNeverSelectsSecrets(t *testing.T) {
	repo := t.TempDir()
	secret := "Zx8vQ2mN7pL4wR9t" + "Kq"
	src := `package app

// A returns one.
func A() int {
	x := 1
	y := 2
	return x + y
}

// B talks to the service.
func B() string {
	client := "svc"
	apiKey := "` + secret + `"
	return client + apiKey
}

// C returns three.
func C() int {
	a := 1
	b := 2
	return a + b
}
`
	if err := os.WriteFile(filepath.Join(repo, "app.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	secretLine := 13
	cfg := DefaultConfig()
	cfg.Repos = []string{repo}
	cfg.ContextLines = 2
	pl := testPlan([]string{"go"}, vocab.Values(vocab.DimCursor), 30)
	for i := range pl.Cells {
		pl.Cells[i].Values["query_style"] = "normal_code"
	}
	res := generate(t, pl, cfg)
	if res.Stats.FilesWithSecrets != 1 || res.Stats.SecretRegions == 0 {
		t.Errorf("stats: %d files with secrets, %d regions left out", res.Stats.FilesWithSecrets, res.Stats.SecretRegions)
	}
	if res.Stats.Unfulfilled["go/whole_file"] != 30 {
		t.Errorf("whole file of a file with a secret was selectable: %v", res.Stats.Unfulfilled)
	}
	for _, c := range res.Configs {
		from, to := c.Cursor.Line-cfg.ContextLines, c.Cursor.Line+cfg.ContextLines
		if c.Selection != nil {
			from, to = c.Selection.Start.Line, c.Selection.End.Line
		}
		if from <= secretLine && secretLine <= to {
			t.Errorf("%s (%s): region %d-%d includes the secret on line %d", c.ID, c.CursorBehaviour, from, to, secretLine)
		}
		if strings.Contains(c.Turns[0].Query, secret) {
			t.Errorf("%s: the query contains the secret", c.ID)
		}
	}
	if strings.Contains(res.Stats.Summary(), secret) {
		t.Error("stats mention the secret")
	}
}
