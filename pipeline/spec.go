package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Pipeline file identity.
const (
	APIVersion = "dialogfarm/v1"
	Kind       = "Pipeline"
)

// Spec is a pipeline file: a DAG of nodes, each an operator with params
// and named inputs. Edges are the inputs: a node's input port names the
// node (and, for operators with several outputs, the port) it reads.
//
//	apiVersion: dialogfarm/v1
//	kind: Pipeline
//	name: default
//	nodes:
//	  - id: plan
//	    op: plan
//	    params: {n: 20, seed: 7}
//	    inputs: {profile: profile}
type Spec struct {
	APIVersion string `yaml:"apiVersion" json:"apiVersion"`
	Kind       string `yaml:"kind" json:"kind"`
	Name       string `yaml:"name,omitempty" json:"name,omitempty"`
	Nodes      []Node `yaml:"nodes" json:"nodes"`
	// parseFindings are problems found while reading the file that the
	// decoded spec can no longer show (a repeated input key).
	parseFindings []Finding
}

// Node is one operator application.
type Node struct {
	ID     string            `yaml:"id" json:"id"`
	Op     string            `yaml:"op" json:"op"`
	Params map[string]any    `yaml:"params,omitempty" json:"params,omitempty"`
	Inputs map[string]string `yaml:"inputs,omitempty" json:"inputs,omitempty"`
	// Line is the node's line in the file it was read from (0: not read
	// from a file).
	Line int `yaml:"-" json:"-"`
}

// Ref is a parsed input reference: "node" or "node.port".
type Ref struct {
	Node, Port string
}

// ParseRef splits an input reference.
func ParseRef(s string) Ref {
	node, port, _ := strings.Cut(s, ".")
	return Ref{Node: node, Port: port}
}

func (r Ref) String() string {
	if r.Port == "" {
		return r.Node
	}
	return r.Node + "." + r.Port
}

// ParseSpec reads a pipeline file. Unknown keys and malformed YAML are
// errors naming file and line; what the graph means is left to Validate.
func ParseSpec(file string, data []byte) (*Spec, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	dups := dropRepeatedInputs(&doc)
	clean, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var s Spec
	dec := yaml.NewDecoder(bytes.NewReader(clean))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for j, n := range nodesOf(&doc) {
		if j < len(s.Nodes) {
			s.Nodes[j].Line = n.Line
		}
	}
	s.parseFindings = dups
	if err := s.normalize(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &s, nil
}

// nodesOf returns the YAML nodes of the spec's nodes list.
func nodesOf(doc *yaml.Node) []*yaml.Node {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "nodes" && root.Content[i+1].Kind == yaml.SequenceNode {
			return root.Content[i+1].Content
		}
	}
	return nil
}

// dropRepeatedInputs removes a second producer given for one input port
// (a repeated key under inputs:) and reports it; the first one stays.
func dropRepeatedInputs(doc *yaml.Node) []Finding {
	var out []Finding
	for _, n := range nodesOf(doc) {
		if n.Kind != yaml.MappingNode {
			continue
		}
		id := ""
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "id" {
				id = n.Content[i+1].Value
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			in := n.Content[i+1]
			if n.Content[i].Value != "inputs" || in.Kind != yaml.MappingNode {
				continue
			}
			seen := map[string]string{}
			var kept []*yaml.Node
			for j := 0; j+1 < len(in.Content); j += 2 {
				k, val := in.Content[j], in.Content[j+1]
				if first, ok := seen[k.Value]; ok {
					out = append(out, Finding{Code: CodeDuplicateProd, Severity: SevError, Node: id, Port: k.Value, Line: k.Line,
						Message:    fmt.Sprintf("input %s has two producers: %s and %s", k.Value, first, val.Value),
						Suggestion: fmt.Sprintf("keep one; to combine both, add a merge node reading %s and %s", first, val.Value)})
					continue
				}
				seen[k.Value] = val.Value
				kept = append(kept, k, val)
			}
			in.Content = kept
		}
	}
	return out
}

// normalize makes param values JSON-shaped (numbers float64, maps
// map[string]any), so a spec read from YAML, from JSON or built in code
// compares and hashes the same.
func (s *Spec) normalize() error {
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if len(n.Params) == 0 {
			n.Params = nil
			continue
		}
		p, err := normalizeParams(n.Params)
		if err != nil {
			return fmt.Errorf("node %s: params: %w", n.ID, err)
		}
		n.Params = p
	}
	return nil
}

func normalizeParams(p map[string]any) (map[string]any, error) {
	for _, name := range sortedKeys(p) {
		if f, ok := p[name].(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil, fmt.Errorf("param %s is %v: want a finite number", name, f)
		}
	}
	data, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// YAML encodes the spec as a pipeline file.
func (s *Spec) YAML() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encode pipeline %s: %w", s.Name, err)
	}
	return b.Bytes(), enc.Close()
}

// Clone deep-copies the spec.
func (s *Spec) Clone() *Spec {
	data, _ := json.Marshal(s)
	var c Spec
	_ = json.Unmarshal(data, &c)
	for i := range c.Nodes {
		if i < len(s.Nodes) {
			c.Nodes[i].Line = s.Nodes[i].Line
		}
	}
	return &c
}

// Node returns the node with id, or nil.
func (s *Spec) Node(id string) *Node {
	for i := range s.Nodes {
		if s.Nodes[i].ID == id {
			return &s.Nodes[i]
		}
	}
	return nil
}

// NodeIDs lists the node ids in file order.
func (s *Spec) NodeIDs() []string {
	ids := make([]string, len(s.Nodes))
	for i, n := range s.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
