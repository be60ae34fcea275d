package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckManifest(t *testing.T) {
	base := Manifest{Profile: "default", ProfileHash: "h1", N: 10, Seed: 7, Repos: []string{"/r/a"}}
	cases := []struct {
		name      string
		change    func(m *Manifest)
		wantField string // "" when the folder must be accepted
	}{
		{"same arguments", func(*Manifest) {}, ""},
		{"profile content", func(m *Manifest) { m.ProfileHash = "h2" }, "field profile"},
		{"n", func(m *Manifest) { m.N = 11 }, "field n was 10, now 11"},
		{"seed", func(m *Manifest) { m.Seed = 8 }, "field seed"},
		{"repos", func(m *Manifest) { m.Repos = []string{"/r/b"} }, "field repos"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ManifestFile)
			if err := checkManifest(path, base); err != nil {
				t.Fatalf("new folder: %v", err)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("manifest not written: %v", err)
			}
			next := base
			next.Repos = append([]string(nil), base.Repos...)
			c.change(&next)
			err := checkManifest(path, next)
			if c.wantField == "" {
				if err != nil {
					t.Fatalf("same arguments refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrOtherRun) || !strings.Contains(err.Error(), c.wantField) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v, want ErrOtherRun naming %s and %q", err, path, c.wantField)
			}
		})
	}
}

func TestCheckManifestCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), ManifestFile)
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := checkManifest(path, Manifest{N: 1})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("corrupt manifest: %v", err)
	}
}

// TestNonFiniteParamsRefused: YAML's .nan and .inf are numbers no
// param's range holds; the file is refused naming the node and the param.
func TestNonFiniteParamsRefused(t *testing.T) {
	for _, v := range []string{".nan", ".inf", "-.inf"} {
		src := "apiVersion: dialogfarm/v1\nkind: Pipeline\nnodes:\n  - id: export\n    op: export\n    params: {min_score: " + v + "}\n"
		_, err := ParseSpec("p.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "p.yaml: node export: params: param min_score is") || !strings.Contains(err.Error(), "want a finite number") {
			t.Errorf("min_score: %s: %v", v, err)
		}
	}
}

// TestManifestExportSettings: a later run with other export settings is
// accepted and run.json then holds them (report, export and judge read
// them); a run.json written before they existed still reads.
func TestManifestExportSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ManifestFile)
	old := `{"profile": "default", "profile_hash": "h1", "n": 10, "seed": 7, "repos": ["/r/a"]}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	m, ok, err := ReadManifest(dir)
	if err != nil || !ok || m.Seed != 7 || m.MinScore != nil || m.AllowOffline {
		t.Fatalf("older run.json: %+v ok %v err %v", m, ok, err)
	}
	three := 3.0
	m.MinScore, m.AllowOffline, m.Format = &three, true, "sharegpt"
	if err := checkManifest(path, m); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadManifest(dir)
	if err != nil || got.MinScore == nil || *got.MinScore != 3 || !got.AllowOffline || got.Format != "sharegpt" {
		t.Errorf("after a run with other export settings: %+v, %v", got, err)
	}
	if _, ok, err := ReadManifest(t.TempDir()); ok || err != nil {
		t.Errorf("a folder without run.json: ok %v err %v", ok, err)
	}
}
