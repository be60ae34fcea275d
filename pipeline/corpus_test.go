package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"dialogfarm/internal/llmtest"
	"dialogfarm/pool"
)

// labelled is one corpus entry: a pipeline and the finding code it must
// raise ("" for a valid pipeline).
type labelled struct {
	name   string
	spec   *Spec
	expect string
}

var corpusEnv = Env{Endpoints: []string{"judge", "coder-a"}, Plugins: []string{"askplugin"}}

// handCorpus reads testdata/corpus: each file's first line says
// "# expect: valid" or "# expect: CODE".
func handCorpus(tb testing.TB) []labelled {
	tb.Helper()
	files, _ := filepath.Glob("testdata/corpus/*.yaml")
	if len(files) < 20 {
		tb.Fatalf("corpus has %d files", len(files))
	}
	var out []labelled
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		first, _, _ := bufio.NewReader(bytes.NewReader(data)).ReadLine()
		expect := strings.TrimSpace(strings.TrimPrefix(string(first), "# expect:"))
		if expect == "valid" {
			expect = ""
		}
		s, err := ParseSpec(f, data)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, labelled{filepath.Base(f), s, expect})
	}
	return out
}

// mutate applies one random mutation to a valid spec and says which code
// it must raise ("" when the mutation keeps the pipeline valid). ok is
// false when the mutation does not apply to this spec.
func mutate(s *Spec, reg *Registry, r *rand.Rand) (m *Spec, kind, expect string, ok bool) {
	m = s.Clone()
	if len(m.Nodes) == 0 {
		return nil, "", "", false
	}
	n := &m.Nodes[r.IntN(len(m.Nodes))]
	op := reg.Get(n.Op)
	kinds := []string{"op_typo", "param_typo", "out_of_range", "drop_input", "wrong_type", "cycle", "drop_param", "missing_path", "tweak_param", "rename_node", "insert_dedup", "bad_ref", "field_typo"}
	kind = kinds[r.IntN(len(kinds))]
	switch kind {
	case "op_typo":
		i := r.IntN(len(n.Op))
		n.Op = n.Op[:i] + n.Op[i+1:]
		return m, kind, CodeUnknownOperator, reg.Get(n.Op) == nil
	case "param_typo":
		names := sortedKeys(op.Params.Properties)
		if len(names) == 0 {
			return nil, kind, "", false
		}
		p := names[r.IntN(len(names))]
		if n.Params == nil {
			n.Params = map[string]any{}
		}
		n.Params[p+"s"] = 1.0
		return m, kind, CodeUnknownParam, true
	case "out_of_range":
		for _, p := range sortedKeys(op.Params.Properties) {
			if sc := op.Params.Properties[p]; sc.Maximum != nil {
				if n.Params == nil {
					n.Params = map[string]any{}
				}
				n.Params[p] = *sc.Maximum*2 + 1 + float64(r.IntN(5))
				return m, kind, CodeParamSchema, true
			}
		}
	case "drop_input":
		for _, p := range op.Inputs {
			if _, has := n.Inputs[p.Name]; has && !p.Optional {
				delete(n.Inputs, p.Name)
				return m, kind, CodeUnconnected, true
			}
		}
	case "wrong_type":
		for port := range n.Inputs {
			want := op.Input(port).Type
			for _, other := range m.Nodes {
				oop := reg.Get(other.Op)
				if other.ID != n.ID && len(oop.Outputs) == 1 && oop.Outputs[0].Type != want {
					n.Inputs[port] = other.ID
					return m, kind, CodeTypeMismatch, true
				}
			}
		}
	case "cycle":
		// Point one of n's inputs at a descendant of n with that type.
		order, _ := m.Topo()
		desc := descendants(m, n.ID)
		for port := range n.Inputs {
			want := op.Input(port).Type
			for _, id := range order {
				d := m.Node(id)
				if dop := reg.Get(d.Op); desc[id] && len(dop.Outputs) == 1 && dop.Outputs[0].Type == want {
					n.Inputs[port] = id
					return m, kind, CodeCycle, true
				}
			}
		}
	case "drop_param":
		for _, p := range op.Params.Required {
			if _, has := n.Params[p]; has {
				delete(n.Params, p)
				return m, kind, CodeMissingParam, true
			}
		}
	case "missing_path":
		for p, k := range op.Resources {
			if k == ResourceFile || k == ResourceDir {
				if _, has := n.Params[p]; has {
					if k == ResourceDir {
						n.Params[p] = []any{"../examples/missing-" + fmt.Sprint(r.IntN(100))}
					} else {
						n.Params[p] = "testdata/missing-" + fmt.Sprint(r.IntN(100)) + ".jsonl"
					}
					return m, kind, CodeMissingResource, true
				}
			}
		}
	case "tweak_param":
		for _, p := range sortedKeys(n.Params) {
			if sc := op.Params.Properties[p]; sc != nil && sc.Maximum != nil && sc.Type == "number" {
				n.Params[p] = *sc.Minimum + r.Float64()*(*sc.Maximum-*sc.Minimum)
				return m, kind, "", true
			}
		}
	case "rename_node":
		old, id := n.ID, n.ID+"-x"
		n.ID = id
		for i := range m.Nodes {
			for port, ref := range m.Nodes[i].Inputs {
				if rf := ParseRef(ref); rf.Node == old {
					rf.Node = id
					m.Nodes[i].Inputs[port] = rf.String()
				}
			}
		}
		return m, kind, "", true
	case "insert_dedup":
		for port, ref := range n.Inputs {
			if op.Input(port).Type == TypeDialogues {
				m.Nodes = append(m.Nodes, Node{ID: "dedup-" + n.ID, Op: "dedup", Inputs: map[string]string{"dialogues": ref}})
				m.Node(n.ID).Inputs[port] = "dedup-" + n.ID
				return m, kind, "", true
			}
		}
	case "field_typo":
		if f, ok := n.Params["field"].(string); ok && n.Op == "filter" {
			n.Params["field"] = f[:len(f)-1] + "s"
			return m, kind, CodeFieldNotProduced, true
		}
	case "bad_ref":
		for port := range n.Inputs {
			n.Inputs[port] = "ghost"
			return m, kind, CodeUnknownNode, true
		}
	}
	return nil, kind, "", false
}

func descendants(s *Spec, id string) map[string]bool {
	out := map[string]bool{}
	var walk func(string)
	walk = func(from string) {
		for _, e := range s.edges() {
			if e.from == from && !out[e.to] {
				out[e.to] = true
				walk(e.to)
			}
		}
	}
	walk(id)
	return out
}

// corpus is the hand-written pipelines plus mutants of the valid ones.
func corpus(tb testing.TB, mutants int) []labelled {
	reg := NewRegistry()
	hand := handCorpus(tb)
	out := slices.Clone(hand)
	var valid []labelled
	for _, l := range hand {
		if l.expect == "" && len(l.spec.Nodes) > 0 {
			valid = append(valid, l)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for made := 0; made < mutants; {
		base := valid[r.IntN(len(valid))]
		m, kind, expect, ok := mutate(base.spec, reg, r)
		if !ok {
			continue
		}
		made++
		out = append(out, labelled{fmt.Sprintf("%s~%s#%d", base.name, kind, made), m, expect})
	}
	return out
}

// TestValidatorPrecisionRecall scores the validator on the labelled
// corpus: a pipeline is flagged when it has an error finding; a flagged
// invalid pipeline counts as detected with the right code when the
// expected code is among its errors.
func TestValidatorPrecisionRecall(t *testing.T) {
	reg := NewRegistry()
	var tp, fp, fn, tn, rightCode, suggested int
	perCode := map[string][2]int{}
	for _, l := range corpus(t, 400) {
		errs := Errors(Validate(l.spec, reg, corpusEnv))
		flagged := len(errs) > 0
		switch {
		case flagged && l.expect != "":
			tp++
			c := perCode[l.expect]
			c[1]++
			if hasCode(errs, l.expect, "") {
				rightCode++
				c[0]++
				for _, f := range errs {
					if f.Code == l.expect && f.Suggestion != "" {
						suggested++
						break
					}
				}
			} else {
				t.Errorf("%s: want %s, got %v", l.name, l.expect, errs)
			}
			perCode[l.expect] = c
		case flagged:
			fp++
			t.Errorf("%s: valid pipeline flagged: %v", l.name, errs)
		case l.expect != "":
			fn++
			c := perCode[l.expect]
			c[1]++
			perCode[l.expect] = c
			t.Errorf("%s: %s not detected", l.name, l.expect)
		default:
			tn++
		}
	}
	precision := float64(tp) / float64(max(1, tp+fp))
	recall := float64(tp) / float64(max(1, tp+fn))
	t.Logf("corpus %d pipelines (%d invalid, %d valid): precision %.3f recall %.3f (tp %d fp %d fn %d tn %d)",
		tp+fp+fn+tn, tp+fn, fp+tn, precision, recall, tp, fp, fn, tn)
	t.Logf("right code %d/%d, with a suggestion %d/%d", rightCode, tp+fn, suggested, rightCode)
	codes := sortedKeys(perCode)
	sort.Strings(codes)
	for _, c := range codes {
		t.Logf("  %-20s %d/%d", c, perCode[c][0], perCode[c][1])
	}
	if precision < 0.99 || recall < 0.99 {
		t.Errorf("precision %.3f recall %.3f, want ≥ 0.99", precision, recall)
	}
}

// TestAcceptedPipelinesRun runs every accepted pipeline of the corpus
// (hand-written and a sample of valid mutants) with configs queries
// written by the fake model. The editor is not started: each drive node's
// folder is given recorded dialogues for its configs before it runs, so
// the drive finds every config recorded (its resume rule) and starts
// nothing.
func TestAcceptedPipelinesRun(t *testing.T) {
	reg := NewRegistry()
	model := llmtest.New(t, func(r llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "Query: \"what does this do?\""} })
	mc := pool.DefaultMemberConfig()
	mc.Name, mc.BaseURL, mc.Model, mc.Stream = "writer", model.URL, "writer", false
	qm, err := pool.NewMember(mc, pool.Policy{Retry: pool.RetryConfig{MaxAttempts: 1}}, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, l := range corpus(t, 60) {
		if l.expect != "" || len(Errors(Validate(l.spec, reg, corpusEnv))) > 0 {
			continue
		}
		t.Run(l.name, func(t *testing.T) {
			out := t.TempDir()
			env := RunEnv{Out: out, QueryModel: qm, Log: zaptest.NewLogger(t), Validate: corpusEnv, BeforeNode: feedRecorded(t)}
			states, err := RunSpec(context.Background(), l.spec, reg, env)
			if err != nil {
				t.Fatal(err)
			}
			if len(states) != len(l.spec.Nodes) {
				t.Fatalf("%d of %d nodes ran", len(states), len(l.spec.Nodes))
			}
			for _, st := range states {
				for _, v := range st.Outputs {
					if v.Hash == "" {
						t.Errorf("node %s: output %s not hashed", st.ID, v.Path)
					}
				}
			}
		})
		ran++
	}
	t.Logf("%d accepted pipelines ran", ran)
}

// feedRecorded writes recorded dialogues for a drive node's configs into
// its folder.
func feedRecorded(tb testing.TB) func(n *Node, in, out map[string]Value) error {
	return func(n *Node, in, out map[string]Value) error {
		if n.Op != "drive" {
			return nil
		}
		configs, err := readConfigsFile(in["configs"].Path)
		if err != nil {
			return err
		}
		return writeDialogues(out["dialogues"].Path, recordedDialogues(tb, configs))
	}
}
