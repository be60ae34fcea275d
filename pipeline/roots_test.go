package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rootsFixture is a data root holding a repository, a dialogues file and
// a profile, a folder outside it holding the same, and a symbolic link
// inside the root that points outside.
type rootsFixture struct {
	root, outside string
}

func newRootsFixture(t *testing.T) rootsFixture {
	t.Helper()
	f := rootsFixture{root: t.TempDir(), outside: t.TempDir()}
	dialogues, err := os.ReadFile("../sft/testdata/dialogues.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{f.root, f.outside} {
		for name, data := range map[string][]byte{"repo/main.go": []byte("package main\n"), "d.jsonl": dialogues,
			"logs.jsonl": []byte("{}\n"), "p.yaml": []byte("name: x\n"), "configs.jsonl": []byte("\n")} {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Symlink(f.outside, filepath.Join(f.root, "link")); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPathsOutsideRootsAreFindings: every param that names a host path
// (repos, the load_* paths, logs, a profile file) is a PATH_OUTSIDE_ROOTS
// finding, naming node and param, when it lies outside the data roots,
// symbolic links and ../ resolved; paths under a root, and built-in
// profile names, are not.
func TestPathsOutsideRootsAreFindings(t *testing.T) {
	f := newRootsFixture(t)
	env := Env{Roots: []string{f.root}, BaseDir: f.root}
	in, out := func(p string) string { return filepath.Join(f.root, p) }, func(p string) string { return filepath.Join(f.outside, p) }
	cases := []struct {
		name, op, param string
		value           any
		outside         bool
	}{
		{"repos outside", "configs", "repos", []any{in("repo"), out("repo")}, true},
		{"repos home-like via ..", "configs", "repos", []any{"../" + filepath.Base(f.outside) + "/repo"}, true},
		{"repos through a link", "configs", "repos", []any{"link/repo"}, true},
		{"repos inside", "configs", "repos", []any{in("repo"), "repo", "."}, false},
		{"repos as []string", "configs", "repos", []string{out("repo")}, true},
		{"load_dialogues outside", "load_dialogues", "path", out("d.jsonl"), true},
		{"load_dialogues inside", "load_dialogues", "path", "d.jsonl", false},
		{"load_configs outside", "load_configs", "path", out("configs.jsonl"), true},
		{"analyze logs outside", "analyze", "logs", out("logs.jsonl"), true},
		{"analyze logs through a link", "analyze", "logs", in("link/logs.jsonl"), true},
		{"profile file outside", "profile", "name", out("p.yaml"), true},
		{"profile file inside", "profile", "name", "p.yaml", false},
		{"built-in profile", "profile", "name", "default", false},
		{"missing path outside", "load_dialogues", "path", out("nope/d.jsonl"), true},
	}
	reg := NewRegistry()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Spec{APIVersion: APIVersion, Kind: Kind, Nodes: []Node{{ID: "n", Op: c.op, Params: map[string]any{c.param: c.value}}}}
			var got []Finding
			for _, fd := range Validate(s, reg, env) {
				if fd.Code == CodeOutsideRoots {
					got = append(got, fd)
				}
			}
			if !c.outside {
				if len(got) > 0 {
					t.Fatalf("findings for a path inside the roots: %v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Node != "n" || got[0].Param != c.param || got[0].Severity != SevError ||
				!strings.Contains(got[0].Message, f.root) || !strings.Contains(got[0].Suggestion, "--data-root") {
				t.Fatalf("want one error finding on n.%s naming the roots, got %v", c.param, got)
			}
			if noRoots := Validate(s, reg, Env{BaseDir: f.root}); slices.ContainsFunc(noRoots, func(fd Finding) bool { return fd.Code == CodeOutsideRoots }) {
				t.Fatal("a finding with no roots set")
			}
		})
	}
}

// TestEveryHostPathParamIsConfined lists every string param of every
// operator: each must either name a resource the roots check covers
// (dir, file, profile) or be known not to be a host path. A new path
// param added without a resource kind fails here.
func TestEveryHostPathParamIsConfined(t *testing.T) {
	notPaths := map[string]bool{
		"analyze.name": true, "drive.plugin": true, "judge.endpoint": true, "export.format": true, "export.meta": true,
		"report.cells": true, "filter.field": true, "filter.values": true, "dedup.key": true, "dataset.format": true,
		"dataset.meta": true, "dataset.tokenizer": true, "dataset.name": true, "dataset.license": true,
		// written into the card as they are, never opened
		"dataset.license_name": true, "dataset.license_link": true,
	}
	for _, op := range NewRegistry().List() {
		for name, s := range op.Params.Properties {
			isString := s.Type == "string" || s.Type == "array" && s.Items != nil && s.Items.Type == "string"
			if !isString || notPaths[op.Name+"."+name] {
				continue
			}
			if !hostPathKinds[op.Resources[name]] {
				t.Errorf("%s.%s is a string param that is neither a confined host path (resource %q) nor listed as not a path",
					op.Name, name, op.Resources[name])
			}
		}
	}
}

// TestRunChecksRootsBeforeEachNode: a symbolic link inside the root that
// is turned to point outside after the run was validated is refused when
// the node that reads it is about to run; nothing of the outside file
// reaches the run folder.
func TestRunChecksRootsBeforeEachNode(t *testing.T) {
	f := newRootsFixture(t)
	if err := os.MkdirAll(filepath.Join(f.root, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(f.root, "d.jsonl"), filepath.Join(f.root, "data", "d.jsonl")); err != nil {
		t.Fatal(err)
	}
	swing := filepath.Join(f.root, "swing")
	if err := os.Symlink(filepath.Join(f.root, "data"), swing); err != nil {
		t.Fatal(err)
	}
	s := &Spec{APIVersion: APIVersion, Kind: Kind, Nodes: []Node{
		{ID: "a", Op: "load_dialogues", Params: map[string]any{"path": filepath.Join(f.root, "data", "d.jsonl")}},
		{ID: "b", Op: "load_dialogues", Params: map[string]any{"path": filepath.Join(swing, "d.jsonl")}},
		{ID: "m", Op: "merge", Inputs: map[string]string{"a": "a", "b": "b"}},
	}}
	out := filepath.Join(f.root, "run")
	env := RunEnv{Out: out, Validate: Env{Roots: []string{f.root}}, BeforeNode: func(n *Node, _, _ map[string]Value) error {
		if n.ID != "a" {
			return nil
		}
		// After validation, before b runs: the link now leads outside.
		if err := os.Remove(swing); err != nil {
			return err
		}
		return os.Symlink(f.outside, swing)
	}}
	states, err := RunSpec(t.Context(), s, NewRegistry(), env)
	if !errors.Is(err, ErrOutsideRoots) {
		t.Fatalf("run: %v (states %+v)", err, states)
	}
	if _, err := os.Stat(filepath.Join(out, "nodes", "b")); err == nil {
		if entries, _ := os.ReadDir(filepath.Join(out, "nodes", "b")); len(entries) > 0 {
			t.Fatalf("node b wrote %v", entries)
		}
	}
}

// TestStoreRefusesPathsOutsideRoots: a batch whose configs node reads a
// folder outside the roots is not committed.
func TestStoreRefusesPathsOutsideRoots(t *testing.T) {
	f := newRootsFixture(t)
	st, err := OpenStore(filepath.Join(t.TempDir(), "p"), NewRegistry(), Env{Roots: []string{f.root}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Apply("x", Batch{Mutations: []Mutation{
		{Op: MutAddNode, Node: "profile", Operator: "profile", Params: map[string]any{"name": "default"}},
		{Op: MutAddNode, Node: "plan", Operator: "plan", Params: map[string]any{"n": 2}, Inputs: map[string]string{"profile": "profile"}},
		{Op: MutAddNode, Node: "configs", Operator: "configs", Params: map[string]any{"repos": []any{f.outside}}, Inputs: map[string]string{"plan": "plan"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed || !slices.ContainsFunc(res.Findings, func(fd Finding) bool { return fd.Code == CodeOutsideRoots && fd.Node == "configs" }) {
		t.Fatalf("committed a repository outside the roots: %+v", res)
	}
}
