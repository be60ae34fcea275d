package pipeline

import (
	"fmt"
	"slices"
)

// Mutation kinds.
const (
	MutAddNode    = "add_node"
	MutRemoveNode = "remove_node"
	MutSetParam   = "set_param"
	MutConnect    = "connect"
	MutDisconnect = "disconnect"
	MutRenameNode = "rename_node"
	MutReplace    = "replace"
)

// CodeBadMutation is a mutation that cannot be applied as written.
const CodeBadMutation = "BAD_MUTATION"

// Mutation is one edit of a pipeline. Which fields count depends on Op:
//
//	add_node    node, operator, params, inputs
//	remove_node node
//	set_param   node, param, value (null removes the param)
//	connect     node, port, from ("node" or "node.port"), replace
//	disconnect  node, port
//	rename_node node, new_id (inputs that read it follow)
//	replace     spec (the whole pipeline, e.g. a revert or an upload)
type Mutation struct {
	Op       string            `json:"op" jsonschema:"add_node, remove_node, set_param, connect, disconnect, rename_node or replace"`
	Node     string            `json:"node,omitempty" jsonschema:"the node the mutation is about"`
	Operator string            `json:"operator,omitempty" jsonschema:"add_node: the node's operator"`
	Params   map[string]any    `json:"params,omitempty" jsonschema:"add_node: the node's params"`
	Inputs   map[string]string `json:"inputs,omitempty" jsonschema:"add_node: input port to producer (node or node.port)"`
	Param    string            `json:"param,omitempty" jsonschema:"set_param: the param"`
	Value    any               `json:"value,omitempty" jsonschema:"set_param: the value (null removes it)"`
	Port     string            `json:"port,omitempty" jsonschema:"connect, disconnect: the input port of node"`
	From     string            `json:"from,omitempty" jsonschema:"connect: the producer, node or node.port"`
	Replace  bool              `json:"replace,omitempty" jsonschema:"connect: replace the port's current producer"`
	NewID    string            `json:"new_id,omitempty" jsonschema:"rename_node: the new id"`
	Spec     *Spec             `json:"spec,omitempty" jsonschema:"replace: the whole pipeline"`
}

// apply edits s in place. A mutation that cannot apply gives a finding.
func (m Mutation) apply(s *Spec, i int) *Finding {
	bad := func(code, msg, sugg string) *Finding {
		return &Finding{Code: code, Severity: SevError, Node: m.Node, Port: m.Port, Param: m.Param,
			Message: fmt.Sprintf("mutation %d (%s): %s", i, m.Op, msg), Suggestion: sugg}
	}
	var n *Node
	if m.Op != MutAddNode && m.Op != MutReplace {
		if n = s.Node(m.Node); n == nil {
			return bad(CodeUnknownNode, fmt.Sprintf("no node %q", m.Node), closest("node", m.Node, s.NodeIDs()))
		}
	}
	switch m.Op {
	case MutAddNode:
		if s.Node(m.Node) != nil {
			return bad(CodeDuplicateID, "a node "+m.Node+" exists already", "choose another id, or set_param/connect the existing node")
		}
		params, err := normalizeParams(m.Params)
		if err != nil {
			return bad(CodeParamSchema, err.Error(), "")
		}
		if len(params) == 0 {
			params = nil
		}
		var inputs map[string]string
		if len(m.Inputs) > 0 {
			inputs = map[string]string{}
			for k, v := range m.Inputs {
				inputs[k] = v
			}
		}
		s.Nodes = append(s.Nodes, Node{ID: m.Node, Op: m.Operator, Params: params, Inputs: inputs})
	case MutRemoveNode:
		s.Nodes = slices.DeleteFunc(s.Nodes, func(x Node) bool { return x.ID == m.Node })
	case MutSetParam:
		if m.Param == "" {
			return bad(CodeBadMutation, "param is empty", "name the param to set")
		}
		if m.Value == nil {
			delete(n.Params, m.Param)
			if len(n.Params) == 0 {
				n.Params = nil
			}
			break
		}
		p, err := normalizeParams(map[string]any{m.Param: m.Value})
		if err != nil {
			return bad(CodeParamSchema, err.Error(), "")
		}
		if n.Params == nil {
			n.Params = map[string]any{}
		}
		n.Params[m.Param] = p[m.Param]
	case MutConnect:
		if m.Port == "" || m.From == "" {
			return bad(CodeBadMutation, "connect needs port and from", "give the input port and the producer (node or node.port)")
		}
		if cur, ok := n.Inputs[m.Port]; ok && cur != m.From && !m.Replace {
			return bad(CodeDuplicateProd, fmt.Sprintf("input %s already reads %s; %s would be a second producer", m.Port, cur, m.From),
				fmt.Sprintf("set replace: true to read %s instead, or merge %s and %s with a merge node", m.From, cur, m.From))
		}
		if n.Inputs == nil {
			n.Inputs = map[string]string{}
		}
		n.Inputs[m.Port] = m.From
	case MutDisconnect:
		if _, ok := n.Inputs[m.Port]; !ok {
			return bad(CodeUnknownPort, "input "+m.Port+" is not connected", closest("input", m.Port, sortedKeys(n.Inputs)))
		}
		delete(n.Inputs, m.Port)
		if len(n.Inputs) == 0 {
			n.Inputs = nil
		}
	case MutRenameNode:
		if s.Node(m.NewID) != nil {
			return bad(CodeDuplicateID, "a node "+m.NewID+" exists already", "choose another id")
		}
		old := n.ID
		n.ID = m.NewID
		for j := range s.Nodes {
			for port, r := range s.Nodes[j].Inputs {
				if ref := ParseRef(r); ref.Node == old {
					ref.Node = m.NewID
					s.Nodes[j].Inputs[port] = ref.String()
				}
			}
		}
	case MutReplace:
		if m.Spec == nil {
			return bad(CodeBadMutation, "replace needs spec", "give the whole pipeline")
		}
		c := m.Spec.Clone()
		if err := c.normalize(); err != nil {
			return bad(CodeParamSchema, err.Error(), "")
		}
		c.Name = s.Name
		*s = *c
	default:
		return bad(CodeBadMutation, fmt.Sprintf("unknown mutation %q", m.Op),
			closest("mutation", m.Op, []string{MutAddNode, MutRemoveNode, MutSetParam, MutConnect, MutDisconnect, MutRenameNode, MutReplace}))
	}
	return nil
}

// touched lists the nodes a mutation changes.
func (m Mutation) touched() []string {
	switch m.Op {
	case MutReplace:
		return []string{"*"}
	case MutRenameNode:
		return []string{m.Node, m.NewID}
	}
	return []string{m.Node}
}
