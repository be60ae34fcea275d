package redact

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// planted is one secret planted in testdata/corpus.
type planted struct {
	Kind  string `json:"kind"`
	File  string `json:"file"`
	Value string `json:"value"`
}

func readPlanted(tb testing.TB) []planted {
	tb.Helper()
	data, err := os.ReadFile("testdata/planted.json")
	if err != nil {
		tb.Fatal(err)
	}
	var ps []planted
	if err := json.Unmarshal(data, &ps); err != nil {
		tb.Fatal(err)
	}
	return ps
}

var (
	sharedOnce sync.Once
	shared     *Detector
	sharedErr  error
)

// testDetector builds the detector once per test binary.
func testDetector(tb testing.TB) *Detector {
	tb.Helper()
	sharedOnce.Do(func() { shared, sharedErr = NewDetector() })
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return shared
}

// TestDetectorFindsEveryPlantedSecret checks each planted value is found
// exactly, as one finding covering exactly the value.
func TestDetectorFindsEveryPlantedSecret(t *testing.T) {
	d := testDetector(t)
	for _, p := range readPlanted(t) {
		t.Run(p.Kind, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/corpus", p.File))
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			at := strings.Index(text, p.Value)
			if at < 0 {
				t.Fatalf("planted value not in %s", p.File)
			}
			for _, f := range d.Find(text) {
				if f.Start == at && f.End == at+len(p.Value) {
					t.Logf("found by %s", f.Rule)
					return
				}
				if f.Start < at+len(p.Value) && at < f.End {
					t.Fatalf("%s covers %q, not the planted value", f.Rule, text[f.Start:f.End])
				}
			}
			t.Fatalf("not found in %s", p.File)
		})
	}
}

// TestDetectorCorpusHasNoOtherFindings keeps the report's count honest: the
// corpus's ordinary code yields no finding besides the planted values.
func TestDetectorCorpusHasNoOtherFindings(t *testing.T) {
	d := testDetector(t)
	ps := readPlanted(t)
	n := 0
	walkText(t, "testdata/corpus", func(rel, text string) {
		for _, f := range d.Find(text) {
			n++
			s := text[f.Start:f.End]
			known := false
			for _, p := range ps {
				known = known || p.Value == s
			}
			if !known {
				t.Errorf("%s: %s flags %q, which was not planted", rel, f.Rule, s)
			}
		}
	})
	if n != len(ps) {
		t.Errorf("%d findings, %d planted values", n, len(ps))
	}
}

// TestDetectorOrdinaryCode measures false positives on the example
// repository: there must be none.
func TestDetectorOrdinaryCode(t *testing.T) {
	d := testDetector(t)
	files := 0
	walkText(t, "../examples/sample-repo", func(rel, text string) {
		files++
		for _, f := range d.Find(text) {
			t.Errorf("%s: false positive %s on %q", rel, f.Rule, text[f.Start:f.End])
		}
	})
	if files == 0 {
		t.Fatal("no files in examples/sample-repo")
	}
}

func TestDetectorRules(t *testing.T) {
	d := testDetector(t)
	cases := []struct {
		name, text, want, rule string // want "" means nothing is found
	}{
		{"bearer in curl", `curl -H "Authorization: Bearer Zq8Xr2Lm4Np6Tv1Wy3Ks" https://x`, "Zq8Xr2Lm4Np6Tv1Wy3Ks", ""},
		{"bearer template", "headers['Authorization'] = `Bearer ${token}`", "", ""},
		{"basic auth", `req.Header.Set("Authorization", "Basic dXNlcjpTM2NyM3RQNHNz")`, "dXNlcjpTM2NyM3RQNHNz", ""},
		{"dsn", `dsn := "mysql://app:q7Rk2Vx9Lw@tcp(db:3306)/app"`, "q7Rk2Vx9Lw", "dsn-password"},
		{"dsn placeholder", `url = "postgres://user:${DB_PASS}@db/app"`, "", ""},
		{"password field", `password: "Tr0ub4dor&3xQ9zLm"`, "Tr0ub4dor&3xQ9zLm", ""},
		{"password placeholder", `password = "changeme"`, "", ""},
		{"token words", `tokenizer = "bert-base-uncased"`, "", ""},
		{"token url", `"token_uri": "https://oauth2.googleapis.com/token"`, "", ""},
		{"env unquoted", "DB_PASSWORD=k8Jd2Qm5Rt7Wz1\n", "k8Jd2Qm5Rt7Wz1", ""},
		{"identifier", `func TestSanitisedWorkspaceKeepsTreeAndModes(t *testing.T) {}`, "", ""},
		{"commit id", `// fixed in 3f2a9c4e1b7d8a0f6e5c4b3a2d1e0f9a8b7c6d5e`, "", ""},
		{"go.sum hash", `golang.org/x/text v0.28.0 h1:rhazDwis8INMIwQ4tpjLDzUhx6RIpXGsrl8HcW3FF7M=`, "", ""},
		{"go.sum hash of a key module", `github.com/keybase/go-keychain v0.0.1 h1:JAJrlDhOyQqOt0a1eg4cbIZ1Kc7+vmkCigAltpwQpVA=`, "", ""},
		{"random in comment", `# legacy salt: pQ3xV8kL2mZ7rT4wN9bY6cH1`, "pQ3xV8kL2mZ7rT4wN9bY6cH1", "secret-assignment"},
		{"random after prose", `// see pQ3xV8kL2mZ7rT4wN9bY6cH1 for the old one`, "pQ3xV8kL2mZ7rT4wN9bY6cH1", "high-entropy"},
		{"placeholder", `api_key = "REDACTED_GENERIC_API_KEY_1"`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := d.Find(c.text)
			if c.want == "" {
				for _, f := range fs {
					t.Errorf("%s flags %q", f.Rule, c.text[f.Start:f.End])
				}
				return
			}
			if len(fs) != 1 || c.text[fs[0].Start:fs[0].End] != c.want {
				var got []string
				for _, f := range fs {
					got = append(got, f.Rule+":"+c.text[f.Start:f.End])
				}
				t.Fatalf("found %q, want exactly %q", got, c.want)
			}
			if c.rule != "" && fs[0].Rule != c.rule {
				t.Errorf("rule %s, want %s", fs[0].Rule, c.rule)
			}
		})
	}
}

// TestDetectorConcurrent runs one detector from several goroutines (run
// with -race).
func TestDetectorConcurrent(t *testing.T) {
	d := testDetector(t)
	data, err := os.ReadFile("testdata/corpus/app/cloud.go")
	if err != nil {
		t.Fatal(err)
	}
	want := len(d.Find(string(data)))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := len(d.Find(string(data))); got != want {
				t.Errorf("%d findings, want %d", got, want)
			}
		})
	}
	wg.Wait()
}

// walkText calls fn for every file under root, with its path relative to
// root.
func walkText(tb testing.TB, root string, fn func(rel, text string)) {
	tb.Helper()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fn(rel, string(data))
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}
