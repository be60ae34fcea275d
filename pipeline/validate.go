package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"

	"dialogfarm/profiles"
)

// Finding codes.
const (
	CodeBadHeader        = "BAD_HEADER"
	CodeEmpty            = "EMPTY_PIPELINE"
	CodeBadID            = "BAD_NODE_ID"
	CodeDuplicateID      = "DUPLICATE_NODE_ID"
	CodeUnknownOperator  = "UNKNOWN_OPERATOR"
	CodeUnknownParam     = "UNKNOWN_PARAM"
	CodeMissingParam     = "MISSING_PARAM"
	CodeParamSchema      = "PARAM_SCHEMA"
	CodeUnknownPort      = "UNKNOWN_PORT"
	CodeUnknownNode      = "UNKNOWN_NODE"
	CodeUnknownOutput    = "UNKNOWN_OUTPUT"
	CodeTypeMismatch     = "PORT_TYPE_MISMATCH"
	CodeUnconnected      = "UNCONNECTED_INPUT"
	CodeDuplicateProd    = "DUPLICATE_PRODUCER"
	CodeCycle            = "CYCLE"
	CodeFieldNotProduced = "FIELD_NOT_PRODUCED"
	CodeMissingResource  = "MISSING_RESOURCE"
	CodeUnreachable      = "UNREACHABLE"
	CodeDeadEnd          = "DEAD_END"
)

// Severities.
const (
	SevError   = "error"
	SevWarning = "warning"
)

// Finding is one problem Validate found, with where it is and what to do.
type Finding struct {
	Code       string `json:"code"`
	Severity   string `json:"severity"`
	Node       string `json:"node,omitempty"`
	Port       string `json:"port,omitempty"`
	Param      string `json:"param,omitempty"`
	Line       int    `json:"line,omitempty"`
	Message    string `json:"message"`
	Suggestion string `json:"suggestion,omitempty"`
}

func (f Finding) String() string {
	var b strings.Builder
	if f.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", f.Line)
	}
	fmt.Fprintf(&b, "%s %s", f.Severity, f.Code)
	for _, kv := range [][2]string{{"node", f.Node}, {"port", f.Port}, {"param", f.Param}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
		}
	}
	b.WriteString(": " + f.Message)
	if f.Suggestion != "" {
		b.WriteString(" (" + f.Suggestion + ")")
	}
	return b.String()
}

// Errors returns the findings of severity error.
func Errors(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity == SevError {
			out = append(out, f)
		}
	}
	return out
}

// Env is what resources exist for Validate's checks. Relative paths are
// taken from BaseDir.
type Env struct {
	BaseDir string
	// Endpoints are the model endpoint names of the config; Plugins the
	// editor plugins the driver can drive.
	Endpoints []string
	Plugins   []string
	// Roots, when set, are the folders every host path a param names
	// (repositories, logs, loaded files, profile files) must lie under,
	// symbolic links resolved; a path outside is a PATH_OUTSIDE_ROOTS
	// finding. Empty: paths are not confined.
	Roots []string
}

var idPattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// terminal types need no consumer.
var terminal = map[PortType]bool{TypeSFT: true, TypeReport: true, TypeDataset: true}

// Validate checks a pipeline against the registry and the environment.
// The spec is valid when no finding has severity error.
func Validate(s *Spec, reg *Registry, env Env) []Finding {
	v := &validator{s: s, reg: reg, env: env}
	v.run()
	sort.SliceStable(v.out, func(i, j int) bool { return v.out[i].Severity == SevError && v.out[j].Severity != SevError })
	return v.out
}

type validator struct {
	s   *Spec
	reg *Registry
	env Env
	out []Finding
}

func (v *validator) add(f Finding) {
	if f.Severity == "" {
		f.Severity = SevError
	}
	if n := v.s.Node(f.Node); n != nil && f.Line == 0 {
		f.Line = n.Line
	}
	v.out = append(v.out, f)
}

func (v *validator) run() {
	s := v.s
	if s.APIVersion != APIVersion || s.Kind != Kind {
		v.add(Finding{Code: CodeBadHeader, Message: fmt.Sprintf("apiVersion %q kind %q", s.APIVersion, s.Kind),
			Suggestion: fmt.Sprintf("use apiVersion: %s and kind: %s", APIVersion, Kind)})
	}
	if len(s.Nodes) == 0 {
		v.add(Finding{Code: CodeEmpty, Severity: SevWarning, Message: "the pipeline has no nodes", Suggestion: "add a source node, e.g. op profile"})
	}
	v.out = append(v.out, s.parseFindings...)
	seen := map[string]bool{}
	for _, n := range s.Nodes {
		switch {
		case !idPattern.MatchString(n.ID):
			v.add(Finding{Code: CodeBadID, Node: n.ID, Line: n.Line, Message: fmt.Sprintf("node id %q is not a lower-case name", n.ID),
				Suggestion: "use letters, digits, _ and -, starting with a letter (no dots)"})
		case seen[n.ID]:
			v.add(Finding{Code: CodeDuplicateID, Node: n.ID, Line: n.Line, Message: "two nodes have id " + n.ID, Suggestion: "rename one of them"})
		}
		seen[n.ID] = true
	}
	for i := range s.Nodes {
		v.node(&s.Nodes[i])
	}
	order, cyc := v.topo()
	if cyc != nil {
		v.add(Finding{Code: CodeCycle, Node: cyc[0], Message: "cycle " + strings.Join(cyc, " → "),
			Suggestion: fmt.Sprintf("remove the input of %s that reads %s", cyc[1], cyc[0])})
	}
	v.fields(order)
	v.reach()
}

// node checks one node's operator, params, resources and inputs.
func (v *validator) node(n *Node) {
	op := v.reg.Get(n.Op)
	if op == nil {
		v.add(Finding{Code: CodeUnknownOperator, Node: n.ID, Message: fmt.Sprintf("unknown operator %q", n.Op),
			Suggestion: closest("operator", n.Op, v.reg.Names())})
		return
	}
	v.params(n, op)
	for _, f := range rootFindings(n, op, n.Params, v.env) {
		v.add(f)
	}
	for _, port := range sortedKeys(n.Inputs) {
		v.input(n, op, port, ParseRef(n.Inputs[port]))
	}
	for _, p := range op.Inputs {
		if _, ok := n.Inputs[p.Name]; !ok && !p.Optional {
			v.add(Finding{Code: CodeUnconnected, Node: n.ID, Port: p.Name,
				Message:    fmt.Sprintf("required input %s (%s) is not connected", p.Name, p.Type),
				Suggestion: v.producersOf(n.ID, p.Type)})
		}
	}
}

func (v *validator) params(n *Node, op *Operator) {
	schemas, err := op.paramSchemas()
	if err != nil {
		v.add(Finding{Code: CodeParamSchema, Node: n.ID, Message: err.Error()})
		return
	}
	names := sortedKeys(op.Params.Properties)
	for _, name := range sortedKeys(n.Params) {
		rs, ok := schemas[name]
		if !ok {
			v.add(Finding{Code: CodeUnknownParam, Node: n.ID, Param: name, Message: fmt.Sprintf("operator %s has no param %q", op.Name, name),
				Suggestion: closest("param", name, names)})
			continue
		}
		if err := rs.Validate(n.Params[name]); err != nil {
			v.add(Finding{Code: CodeParamSchema, Node: n.ID, Param: name, Message: fmt.Sprintf("%v: %v", n.Params[name], err),
				Suggestion: describeSchema(op, name)})
			continue
		}
		if kind, ok := op.Resources[name]; ok {
			v.resource(n, name, kind, n.Params[name])
		}
	}
	for _, req := range op.Params.Required {
		if _, ok := n.Params[req]; !ok {
			v.add(Finding{Code: CodeMissingParam, Node: n.ID, Param: req, Message: fmt.Sprintf("required param %s is missing", req),
				Suggestion: describeSchema(op, req)})
		}
	}
}

func describeSchema(op *Operator, name string) string {
	s := op.Params.Properties[name]
	if s == nil {
		return ""
	}
	d := "set " + name + " to a " + s.Type
	if s.Type == "array" && s.Items != nil {
		d += " of " + s.Items.Type
		if len(s.Items.Enum) > 0 {
			d += fmt.Sprintf(" from %v", s.Items.Enum)
		}
	}
	if len(s.Enum) > 0 {
		d += fmt.Sprintf(", one of %v", s.Enum)
	}
	if s.Minimum != nil && s.Maximum != nil {
		d += fmt.Sprintf(" in [%g, %g]", *s.Minimum, *s.Maximum)
	}
	if s.Description != "" {
		d += ": " + s.Description
	}
	return d
}

func (v *validator) path(p string) string {
	if filepath.IsAbs(p) || v.env.BaseDir == "" {
		return p
	}
	return filepath.Join(v.env.BaseDir, p)
}

func (v *validator) resource(n *Node, param, kind string, val any) {
	var vals []string
	switch x := val.(type) {
	case string:
		vals = []string{x}
	case []any:
		for _, e := range x {
			vals = append(vals, fmt.Sprint(e))
		}
	}
	for _, s := range vals {
		if s == "" {
			continue
		}
		miss := func(msg, sugg string) {
			v.add(Finding{Code: CodeMissingResource, Node: n.ID, Param: param, Message: msg, Suggestion: sugg})
		}
		switch kind {
		case ResourceDir, ResourceFile:
			st, err := os.Stat(v.path(s))
			switch {
			case err != nil:
				miss(fmt.Sprintf("%s %s does not exist", kind, s), "give an existing path (relative paths are taken from "+v.baseDesc()+")")
			case kind == ResourceDir && !st.IsDir():
				miss(s+" is not a folder", "give a repository folder")
			case kind == ResourceFile && st.IsDir():
				miss(s+" is a folder", "give a file")
			}
		case ResourceProfile:
			if _, err := os.Stat(v.path(s)); err != nil && !slices.Contains(profiles.BuiltinNames(), s) {
				miss(fmt.Sprintf("profile %s is neither a built-in nor a file", s), closest("built-in profile", s, profiles.BuiltinNames()))
			}
		case ResourceEndpoint:
			if !slices.Contains(v.env.Endpoints, s) {
				miss(fmt.Sprintf("model endpoint %q is not in the config", s), closest("endpoint", s, v.env.Endpoints))
			}
		case ResourcePlugin:
			if !slices.Contains(v.env.Plugins, s) {
				miss(fmt.Sprintf("plugin %q is not installed", s), closest("plugin", s, v.env.Plugins))
			}
		}
	}
}

func (v *validator) baseDesc() string {
	if v.env.BaseDir == "" {
		return "the working folder"
	}
	return v.env.BaseDir
}

// input checks one connection.
func (v *validator) input(n *Node, op *Operator, port string, ref Ref) {
	in := op.Input(port)
	if in == nil {
		var names []string
		for _, p := range op.Inputs {
			names = append(names, p.Name)
		}
		v.add(Finding{Code: CodeUnknownPort, Node: n.ID, Port: port, Message: fmt.Sprintf("operator %s has no input %q", op.Name, port),
			Suggestion: closest("input", port, names)})
		return
	}
	src := v.s.Node(ref.Node)
	if src == nil {
		v.add(Finding{Code: CodeUnknownNode, Node: n.ID, Port: port, Message: fmt.Sprintf("input %s reads node %q, which does not exist", port, ref.Node),
			Suggestion: closest("node", ref.Node, v.s.NodeIDs())})
		return
	}
	sop := v.reg.Get(src.Op)
	if sop == nil {
		return // reported on the source node
	}
	out := sop.Output(ref.Port)
	if out == nil {
		var names []string
		for _, p := range sop.Outputs {
			names = append(names, ref.Node+"."+p.Name)
		}
		msg := fmt.Sprintf("node %s (%s) has no output %q", ref.Node, sop.Name, ref.Port)
		if ref.Port == "" {
			msg = fmt.Sprintf("node %s (%s) has %d outputs: name one", ref.Node, sop.Name, len(sop.Outputs))
		}
		v.add(Finding{Code: CodeUnknownOutput, Node: n.ID, Port: port, Message: msg, Suggestion: closest("output", ref.String(), names)})
		return
	}
	if out.Type != in.Type {
		v.add(Finding{Code: CodeTypeMismatch, Node: n.ID, Port: port,
			Message:    fmt.Sprintf("input %s wants %s but %s gives %s", port, in.Type, ref, out.Type),
			Suggestion: v.producersOf(n.ID, in.Type)})
	}
}

// producersOf suggests outputs of type t other than node self's.
func (v *validator) producersOf(self string, t PortType) string {
	var refs []string
	for _, n := range v.s.Nodes {
		op := v.reg.Get(n.Op)
		if op == nil || n.ID == self {
			continue
		}
		for _, p := range op.Outputs {
			if p.Type == t {
				r := n.ID
				if len(op.Outputs) > 1 {
					r += "." + p.Name
				}
				refs = append(refs, r)
			}
		}
	}
	if len(refs) > 0 {
		return "connect it to " + strings.Join(refs, " or ")
	}
	var ops []string
	for _, op := range v.reg.List() {
		for _, p := range op.Outputs {
			if p.Type == t && !slices.Contains(ops, op.Name) {
				ops = append(ops, op.Name)
			}
		}
	}
	return fmt.Sprintf("add a node that outputs %s (operator %s) and connect it", t, strings.Join(ops, " or "))
}

// closest suggests the names nearest to got.
func closest(what, got string, names []string) string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, n := range names {
		d := levenshtein.ComputeDistance(strings.ToLower(got), strings.ToLower(n))
		if strings.Contains(n, got) || strings.Contains(got, n) {
			d = min(d, 1)
		}
		if d <= max(2, len(got)/2) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	if len(cs) > 3 {
		cs = cs[:3]
	}
	if len(cs) == 0 {
		if len(names) == 0 {
			return ""
		}
		return fmt.Sprintf("known %ss: %s", what, strings.Join(names, ", "))
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.name)
	}
	return "did you mean " + strings.Join(out, " or ") + "?"
}

// Closest suggests the names nearest to got ("did you mean …?").
func Closest(what, got string, names []string) string { return closest(what, got, names) }
