package pipeline

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sampleParams are valid required params for each operator.
var sampleParams = map[string]map[string]any{
	"profile":        {"name": "default"},
	"analyze":        {"logs": "../analyst/testdata/logs.jsonl"},
	"plan":           {"n": 3},
	"configs":        {"repos": []any{"../examples/sample-repo"}},
	"load_dialogues": {"path": "../sft/testdata/dialogues.jsonl"},
	"load_configs":   {"path": "../examples/demo-configs.jsonl"},
	"filter":         {"field": "intent", "values": []any{"fix"}},
	"filter_score":   {"min": 4},
}

// randomBatch makes one to three mutations against s: mostly sensible
// ones (nodes whose inputs exist), some broken.
func randomBatch(s *Spec, reg *Registry, r *rand.Rand, seq int) []Mutation {
	var ms []Mutation
	for range 1 + r.IntN(3) {
		ms = append(ms, randomMutation(s, reg, r, seq))
		seq++
	}
	return ms
}

func randomMutation(s *Spec, reg *Registry, r *rand.Rand, seq int) Mutation {
	ids := s.NodeIDs()
	pick := func() string {
		if len(ids) == 0 || r.IntN(10) == 0 {
			return "nowhere"
		}
		return ids[r.IntN(len(ids))]
	}
	switch k := r.IntN(10); {
	case k < 5 || len(ids) == 0:
		ops := reg.Names()
		op := reg.Get(ops[r.IntN(len(ops))])
		m := Mutation{Op: MutAddNode, Node: fmt.Sprintf("n%d", seq), Operator: op.Name, Params: map[string]any{}, Inputs: map[string]string{}}
		for k, v := range sampleParams[op.Name] {
			m.Params[k] = v
		}
		for _, p := range op.Inputs {
			for _, n := range s.Nodes {
				if out := reg.Get(n.Op).Output(""); out != nil && out.Type == p.Type && r.IntN(4) > 0 {
					m.Inputs[p.Name] = n.ID
				}
			}
		}
		if r.IntN(5) == 0 {
			m.Operator += "x"
		}
		return m
	case k < 7:
		n := pick()
		vals := []any{1, 2.5, 7, "go", -1, nil, true, []any{"intent"}}
		params := []string{"n", "min", "min_score", "format", "validation", "field", "values", "exclude"}
		return Mutation{Op: MutSetParam, Node: n, Param: params[r.IntN(len(params))], Value: vals[r.IntN(len(vals))]}
	case k < 8:
		ports := []string{"dialogues", "configs", "profile", "plan", "a", "b"}
		return Mutation{Op: MutConnect, Node: pick(), Port: ports[r.IntN(len(ports))], From: pick(), Replace: r.IntN(2) == 0}
	case k < 9:
		return Mutation{Op: MutRemoveNode, Node: pick()}
	default:
		return Mutation{Op: MutRenameNode, Node: pick(), NewID: fmt.Sprintf("r%d", seq)}
	}
}

func specJSON(tb testing.TB, s *Spec) string {
	tb.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// TestStoreProperties applies random batches and checks: every committed
// state validates; a rejected batch leaves revision and pipeline
// unchanged; the YAML of every state reads back to the same pipeline; and
// reopening the store (replaying the journal) reproduces the state.
func TestStoreProperties(t *testing.T) {
	reg := NewRegistry()
	dir := t.TempDir()
	st, err := OpenStore(dir, reg, corpusEnv)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 9))
	committed, rejected := 0, 0
	rev := 0
	cur := emptySpec("p")
	for i := range 250 {
		batch := Batch{BaseRevision: rev, Mutations: randomBatch(cur, reg, r, i*4), Author: "fuzz"}
		res, err := st.Apply("p", batch)
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		got, gotRev, err := st.Get("p")
		if res.Committed {
			committed++
			if errs := Errors(Validate(got, reg, corpusEnv)); len(errs) > 0 {
				t.Fatalf("batch %d committed an invalid pipeline: %v", i, errs)
			}
			if gotRev != rev+1 {
				t.Fatalf("batch %d: revision %d after %d", i, gotRev, rev)
			}
		} else {
			rejected++
			if err == nil && (gotRev != rev || specJSON(t, got) != specJSON(t, cur)) {
				t.Fatalf("batch %d rejected (%v) but the pipeline changed: r%d→r%d", i, res.Findings, rev, gotRev)
			}
			if len(Errors(res.Findings)) == 0 && len(batch.Mutations) > 0 {
				t.Fatalf("batch %d rejected without an error finding", i)
			}
			continue
		}
		data, err := got.YAML()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseSpec("p.yaml", data)
		if err != nil {
			t.Fatalf("batch %d: YAML does not read back: %v\n%s", i, err, data)
		}
		if specJSON(t, back) != specJSON(t, got) {
			t.Fatalf("batch %d: YAML round trip changed the pipeline:\n%s\n%s", i, specJSON(t, got), specJSON(t, back))
		}
		cur, rev = got, gotRev
	}
	t.Logf("%d batches committed, %d rejected; final pipeline has %d nodes at r%d", committed, rejected, len(cur.Nodes), rev)
	if committed < 20 || rejected < 20 {
		t.Fatalf("the fuzz did not exercise both paths: %d committed, %d rejected", committed, rejected)
	}
	again, err := OpenStore(dir, reg, corpusEnv)
	if err != nil {
		t.Fatal(err)
	}
	replayed, replayedRev, err := again.Get("p")
	if err != nil {
		t.Fatal(err)
	}
	if replayedRev != rev || specJSON(t, replayed) != specJSON(t, cur) {
		t.Fatalf("journal replay: r%d %s, want r%d %s", replayedRev, specJSON(t, replayed), rev, specJSON(t, cur))
	}
	// Every revision of the history reads back and validates.
	for r := 0; r <= rev; r += max(1, rev/10) {
		old, err := again.At("p", r)
		if err != nil {
			t.Fatal(err)
		}
		if errs := Errors(Validate(old, reg, corpusEnv)); len(errs) > 0 {
			t.Fatalf("revision %d invalid: %v", r, errs)
		}
	}
}

func TestStoreConflictAndRevert(t *testing.T) {
	reg := NewRegistry()
	st, err := OpenStore(t.TempDir(), reg, corpusEnv)
	if err != nil {
		t.Fatal(err)
	}
	add := func(base int, id, op string, params map[string]any, inputs map[string]string) ApplyResult {
		t.Helper()
		res, err := st.Apply("p", Batch{BaseRevision: base, Author: "agent", Message: "add " + id,
			Mutations: []Mutation{{Op: MutAddNode, Node: id, Operator: op, Params: params, Inputs: inputs}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := add(0, "d", "load_dialogues", sampleParams["load_dialogues"], nil); !res.Committed || res.Revision != 1 {
		t.Fatalf("first add: %+v", res)
	}
	if res := add(1, "x", "export", nil, map[string]string{"dialogues": "d"}); !res.Committed {
		t.Fatalf("second add: %+v", res)
	}
	// A person still on r1 sets a param: conflict naming r2.
	res, err := st.Apply("p", Batch{BaseRevision: 1, Author: "person", Mutations: []Mutation{{Op: MutSetParam, Node: "d", Param: "judged", Value: false}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed || res.Conflict == nil || res.Conflict.CurrentRevision != 2 || !strings.Contains(res.Conflict.Message, "r2 by agent (add x) changed x") {
		t.Fatalf("stale batch: %+v", res)
	}
	// Unjudged dialogues cannot feed export: rejected with the fix.
	res, _ = st.Apply("p", Batch{BaseRevision: 2, Mutations: []Mutation{{Op: MutSetParam, Node: "d", Param: "judged", Value: false}}})
	if res.Committed || !hasCode(res.Findings, CodeFieldNotProduced, "x") || !strings.Contains(res.Findings[0].Suggestion, "judge") {
		t.Fatalf("unjudged export: %+v", res.Findings)
	}
	// A dry run reports and commits nothing.
	res, _ = st.Apply("p", Batch{BaseRevision: 2, DryRun: true, Mutations: []Mutation{{Op: MutSetParam, Node: "x", Param: "min_score", Value: 4}}})
	if res.Committed || len(Errors(res.Findings)) > 0 || res.Spec.Node("x").Params["min_score"] != 4.0 {
		t.Fatalf("dry run: %+v", res)
	}
	if _, rev, _ := st.Get("p"); rev != 2 {
		t.Fatalf("dry run committed: r%d", rev)
	}
	// Revert to r1 is a new revision holding r1's pipeline.
	res, err = st.Revert("p", 1, 2, "person")
	if err != nil || !res.Committed || res.Revision != 3 {
		t.Fatalf("revert: %+v %v", res, err)
	}
	got, _, _ := st.Get("p")
	r1, _ := st.At("p", 1)
	if !reflect.DeepEqual(got.NodeIDs(), []string{"d"}) || specJSON(t, got) != specJSON(t, r1) {
		t.Fatalf("after revert: %v", got.NodeIDs())
	}
	hist, _ := st.History("p")
	if len(hist) != 3 || hist[2].Message != "revert to r1" {
		t.Fatalf("history: %+v", hist)
	}
}

// TestStoreFilesArePrivate: the store's folder, journals and YAML are
// the user's alone (other local users read no pipeline, as they read no
// run).
func TestStoreFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	st, err := OpenStore(dir, NewRegistry(), Env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply("p", Batch{Mutations: []Mutation{{Op: MutAddNode, Node: "profile", Operator: "profile", Params: map[string]any{"name": "default"}}}}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "p.journal.jsonl"): 0o600, filepath.Join(dir, "p.yaml"): 0o600} {
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", path, info.Mode().Perm(), err, want)
		}
	}
}
