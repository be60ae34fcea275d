package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"dialogfarm/configgen"
	"dialogfarm/driver"
	"dialogfarm/internal/runfiles"
	"dialogfarm/profiles"
	"dialogfarm/sft"
)

// Value is what one output port holds: a file in the run folder (or, for
// a profile, a built-in name or file) and the hash of its content.
type Value struct {
	Type PortType `json:"type"`
	Path string   `json:"path"`
	Hash string   `json:"hash,omitempty"`
}

// Node statuses in a run.
const (
	NodePending = "pending"
	NodeRunning = "running"
	NodeDone    = "done"
	NodeCached  = "cached"
	NodeFailed  = "failed"
)

// NodeState is what a run knows of one node; it is kept in
// OUT/nodes/ID.state.json so a later run can tell whether the node's
// outputs are still current.
type NodeState struct {
	ID       string           `json:"id"`
	Op       string           `json:"op"`
	Key      string           `json:"key"`
	Status   string           `json:"status"`
	Outputs  map[string]Value `json:"outputs,omitempty"`
	Error    string           `json:"error,omitempty"`
	Started  time.Time        `json:"started,omitzero"`
	Finished time.Time        `json:"finished,omitzero"`
	// Result is what the node's stage reported: the drive's
	// driver.Summary, the export's sft.Summary, the dataset's
	// dataset.Stats (read back from a state file, their JSON objects);
	// none for other operators. ResultOf reads them.
	Result any `json:"result,omitempty"`
}

// RunEnv is what a pipeline run needs besides the pipeline.
type RunEnv struct {
	Out   string
	Deps  Deps
	Drive DriveConfig
	// QueryModel writes the configs' queries; nil: templates.
	QueryModel configgen.Model
	// JudgeFor builds the judge of a judge node from its endpoint param
	// ("" for the config's judge); nil: rules only.
	JudgeFor func(endpoint string) (Rejudger, error)
	// Validate is the environment the pipeline is checked against first.
	Validate Env
	// Rubrics are the rubric overrides of the run's judge (judge.Config),
	// named in the dataset card by their version.
	Rubrics map[string]string
	// Limit bounds how many configs each drive node drives (0: all).
	Limit           int
	Progress, Table io.Writer
	Log             *zap.Logger
	// OnNode is told each node's state as it changes; DriveProgress each
	// recorded config of a drive node.
	OnNode        func(NodeState)
	DriveProgress func(node string, p driver.Progress)
	// BeforeNode, when set, is called with a node's input and output
	// values just before it runs (tests use it to give a drive node
	// recorded dialogues).
	BeforeNode func(n *Node, in, out map[string]Value) error
}

type runFunc func(ctx context.Context, x *nodeRun) error

// nodeRun is one node being run.
type nodeRun struct {
	env    *RunEnv
	node   *Node
	params map[string]any
	in     map[string]Value
	out    map[string]Value
	result any // what the stage reports, kept in the node's state
}

type driverProgress = driver.Progress

// decode fills v from the node's params (with defaults).
func (x *nodeRun) decode(v any) error {
	data, err := json.Marshal(x.params)
	if err != nil {
		return fmt.Errorf("node %s: params: %w", x.node.ID, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("node %s: params: %w", x.node.ID, err)
	}
	return nil
}

// ErrInvalid means the pipeline has validation errors.
var ErrInvalid = errors.New("the pipeline is not valid")

// canonical are the run folder's files of the stages: a node whose id is
// its operator's name writes there, so the default pipeline fills the run
// folder with its usual files.
var canonical = map[string]string{"plan": PlanFile, "configs": ConfigsFile, "drive": DialoguesFile, "export": SFTFile, "report": ReportFile, "dataset": DatasetDir}

var extension = map[PortType]string{TypeProfile: ".yaml", TypePlan: ".json", TypeConfigs: ".jsonl", TypeDialogues: ".jsonl", TypeSFT: ".jsonl", TypeReport: ".json", TypeDataset: ""}

func outputPath(out string, n *Node, p Port) string {
	if f, ok := canonical[n.Op]; ok && n.ID == n.Op {
		return filepath.Join(out, f)
	}
	return filepath.Join(out, "nodes", n.ID, p.Name+extension[p.Type])
}

// RunSpec validates the pipeline and runs its nodes in dependency order
// into env.Out. A node whose cache key (operator, params with defaults,
// the hashes of its inputs' contents and of the external files it reads)
// matches the one recorded by an earlier run, with its outputs still in
// place, is not run again; a node whose key changed has its old outputs
// moved to OUT/nodes/stale/ first. Drive nodes always run: they resume by
// themselves and start nothing when every config is recorded.
func RunSpec(ctx context.Context, s *Spec, reg *Registry, env RunEnv) ([]NodeState, error) {
	if env.Log == nil {
		env.Log = zap.NewNop()
	}
	// One redactor for every node, so a secret keeps its placeholder
	// across configs, drive, export and dataset.
	var err error
	if env.Drive.Redact, err = redactor(env.Drive.Redact); err != nil {
		return nil, err
	}
	if errs := Errors(Validate(s, reg, env.Validate)); len(errs) > 0 {
		var msgs []string
		for _, f := range errs {
			msgs = append(msgs, f.String())
		}
		return nil, fmt.Errorf("%w:\n  %s", ErrInvalid, strings.Join(msgs, "\n  "))
	}
	if err := runfiles.MkdirAll(filepath.Join(env.Out, "nodes")); err != nil {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	order, _ := s.Topo()
	states := map[string]*NodeState{}
	var all []NodeState
	for _, id := range order {
		n := s.Node(id)
		states[id] = &NodeState{ID: id, Op: n.Op, Status: NodePending}
		if env.OnNode != nil {
			env.OnNode(*states[id])
		}
	}
	for _, id := range order {
		st, err := runNode(ctx, s.Node(id), reg.Get(s.Node(id).Op), states, &env)
		all = append(all, *st)
		if err != nil {
			return all, fmt.Errorf("node %s (%s): %w", id, st.Op, err)
		}
	}
	return all, nil
}

func runNode(ctx context.Context, n *Node, op *Operator, states map[string]*NodeState, env *RunEnv) (*NodeState, error) {
	st := states[n.ID]
	notify := func() {
		if env.OnNode != nil {
			env.OnNode(*st)
		}
	}
	x := &nodeRun{env: env, node: n, params: op.withDefaults(n.Params), in: map[string]Value{}, out: map[string]Value{}}
	for port, r := range n.Inputs {
		ref := ParseRef(r)
		src := states[ref.Node]
		sp := op.Input(port)
		name := ref.Port
		if name == "" {
			for k := range src.Outputs {
				name = k
			}
		}
		v, ok := src.Outputs[name]
		if !ok || sp == nil {
			return st, fmt.Errorf("input %s: %s has no output %q", port, ref.Node, name)
		}
		x.in[port] = v
	}
	for _, p := range op.Outputs {
		x.out[p.Name] = Value{Type: p.Type, Path: outputPath(env.Out, n, p)}
	}
	// The host paths are checked again now, before the cache key reads
	// them: a symbolic link may have changed since the run was validated.
	if err := checkRoots(n, op, x.params, env.Validate); err != nil {
		st.Status, st.Error = NodeFailed, err.Error()
		notify()
		return st, err
	}
	key, err := cacheKey(n, op, x, env)
	if err != nil {
		return st, err
	}
	st.Key = key
	statePath := filepath.Join(env.Out, "nodes", n.ID+".state.json")
	old := readState(statePath)
	if old != nil && old.Key == key && old.Status == NodeDone && n.Op != "drive" && outputsExist(old.Outputs) {
		st.Status, st.Outputs, st.Started, st.Finished, st.Result = NodeCached, old.Outputs, old.Started, old.Finished, old.Result
		notify()
		env.Log.Info("node cached", zap.String("node", n.ID), zap.String("key", key[:12]))
		return st, nil
	}
	if old != nil && old.Key != key {
		if err := moveStale(env.Out, n, op, x.out, old.Key); err != nil {
			return st, err
		}
	}
	st.Status, st.Started, st.Outputs, st.Result = NodeRunning, time.Now().UTC(), nil, nil
	st.Error = ""
	if err := writeState(statePath, st); err != nil {
		return st, err
	}
	notify()
	for _, v := range x.out {
		if err := runfiles.MkdirAll(filepath.Dir(v.Path)); err != nil {
			return st, fmt.Errorf("create node folder: %w", err)
		}
	}
	env.Log.Info("node starts", zap.String("node", n.ID), zap.String("op", n.Op))
	var runErr error
	if env.BeforeNode != nil {
		runErr = env.BeforeNode(n, x.in, x.out)
	}
	if runErr == nil {
		runErr = op.run(ctx, x)
	}
	st.Finished = time.Now().UTC()
	if runErr != nil {
		st.Status, st.Error = NodeFailed, runErr.Error()
		_ = writeState(statePath, st)
		notify()
		return st, runErr
	}
	st.Result = x.result
	st.Outputs = map[string]Value{}
	for name, v := range x.out {
		if v.Hash, err = hashValue(v); err != nil {
			return st, err
		}
		st.Outputs[name] = v
	}
	st.Status = NodeDone
	if err := writeState(statePath, st); err != nil {
		return st, err
	}
	notify()
	env.Log.Info("node done", zap.String("node", n.ID), zap.Duration("took", st.Finished.Sub(st.Started).Round(time.Millisecond)))
	return st, nil
}

// cacheKey hashes what decides a node's outputs: its operator, its params
// with defaults, its inputs' content hashes and the external content its
// params name (profile, logs and loaded files; repository paths and the
// query model by name).
func cacheKey(n *Node, op *Operator, x *nodeRun, env *RunEnv) (string, error) {
	inputs := map[string]string{}
	for port, v := range x.in {
		inputs[port] = v.Hash
	}
	external := map[string]string{}
	for param, kind := range op.Resources {
		for _, p := range paramStrings(x.params[param]) {
			if kind != ResourceFile && kind != ResourceProfile {
				continue
			}
			h, err := hashValue(Value{Type: TypeProfile, Path: p})
			if err != nil {
				return "", err
			}
			external[param+":"+p] = h
		}
	}
	if n.Op == "configs" {
		external["query_model"] = " "
		if env.QueryModel != nil {
			external["query_model"] = " " + env.QueryModel.Model()
		}
	}
	data, err := json.Marshal(struct {
		Op       string            `json:"op"`
		Params   map[string]any    `json:"params"`
		Inputs   map[string]string `json:"inputs"`
		External map[string]string `json:"external"`
	}{n.Op, x.params, inputs, external})
	if err != nil {
		return "", fmt.Errorf("node %s: cache key: %w", n.ID, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// hashValue hashes a value's content: a file, a folder (a dataset), or a
// built-in profile.
func hashValue(v Value) (string, error) {
	if v.Type == TypeDataset {
		return hashDir(v.Path)
	}
	data, err := os.ReadFile(v.Path)
	if os.IsNotExist(err) && v.Type == TypeProfile {
		p, perr := profiles.Load(v.Path)
		if perr != nil {
			return "", perr
		}
		return p.Hash(), nil
	}
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", v.Path, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// hashDir hashes the names and contents of the files directly in dir, in
// name order.
func hashDir(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", dir, err)
	}
	h := sha256.New()
	for _, e := range entries { // ReadDir sorts by name
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", fmt.Errorf("hash %s: %w", dir, err)
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "%s %x\n", e.Name(), sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func outputsExist(out map[string]Value) bool {
	for _, v := range out {
		if _, err := os.Stat(v.Path); err != nil && v.Type != TypeProfile {
			return false
		}
	}
	return len(out) > 0
}

// moveStale moves a node's outputs made under another key (and the files
// that go with them) to OUT/nodes/stale/ID-KEY/, so nothing produced is
// lost and nothing stale is mixed in.
func moveStale(out string, n *Node, op *Operator, outputs map[string]Value, oldKey string) error {
	dest := filepath.Join(out, "nodes", "stale", n.ID+"-"+oldKey[:min(12, len(oldKey))])
	var paths []string
	for _, v := range outputs {
		paths = append(paths, v.Path)
		switch op.Name {
		case "export":
			paths = append(paths, sft.SidecarPath(v.Path))
		case "drive":
			paths = append(paths, filepath.Join(filepath.Dir(v.Path), "exchanges.jsonl"))
		case "report":
			paths = append(paths, ReportHTMLPath(v.Path))
		}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := runfiles.MkdirAll(dest); err != nil {
			return fmt.Errorf("node %s: keep stale outputs: %w", n.ID, err)
		}
		if err := os.Rename(p, filepath.Join(dest, filepath.Base(p))); err != nil {
			return fmt.Errorf("node %s: keep stale outputs: %w", n.ID, err)
		}
	}
	return nil
}

func readState(path string) *NodeState {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var st NodeState
	if json.Unmarshal(data, &st) != nil {
		return nil
	}
	return &st
}

func writeState(path string, st *NodeState) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("node %s: state: %w", st.ID, err)
	}
	return runfiles.WriteAtomic(path, append(data, '\n'))
}
