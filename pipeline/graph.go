package pipeline

import (
	"fmt"
	"slices"
	"strings"
)

// edge is one connection: to.port reads from.
type edge struct {
	from, to, port string
}

// edges lists the connections whose source node exists, in a stable
// order.
func (s *Spec) edges() []edge {
	var out []edge
	for _, n := range s.Nodes {
		for _, port := range sortedKeys(n.Inputs) {
			ref := ParseRef(n.Inputs[port])
			if s.Node(ref.Node) != nil {
				out = append(out, edge{from: ref.Node, to: n.ID, port: port})
			}
		}
	}
	return out
}

// Topo orders the nodes so every node comes after the nodes it reads. When
// the graph has a cycle, order holds the nodes outside it and cycle one
// cycle's path, first node repeated at the end.
func (s *Spec) Topo() (order []string, cycle []string) {
	indeg := map[string]int{}
	next := map[string][]string{}
	for _, n := range s.Nodes {
		indeg[n.ID] += 0
	}
	for _, e := range s.edges() {
		indeg[e.to]++
		next[e.from] = append(next[e.from], e.to)
	}
	var queue []string
	for _, n := range s.Nodes {
		if indeg[n.ID] == 0 && !slices.Contains(queue, n.ID) {
			queue = append(queue, n.ID)
		}
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		order = append(order, id)
		for _, to := range next[id] {
			if indeg[to]--; indeg[to] == 0 {
				queue = append(queue, to)
			}
		}
	}
	if len(order) < len(indeg) {
		cycle = s.findCycle(next, order)
	}
	return order, cycle
}

// findCycle walks the nodes left after a topological sort to a cycle.
func (s *Spec) findCycle(next map[string][]string, done []string) []string {
	state := map[string]int{} // 0 new, 1 on stack, 2 finished
	for _, id := range done {
		state[id] = 2
	}
	var stack []string
	var found []string
	var visit func(id string) bool
	visit = func(id string) bool {
		state[id] = 1
		stack = append(stack, id)
		for _, to := range next[id] {
			switch state[to] {
			case 1:
				i := slices.Index(stack, to)
				found = append(slices.Clone(stack[i:]), to)
				return true
			case 0:
				if visit(to) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = 2
		return false
	}
	for _, n := range s.Nodes {
		if state[n.ID] == 0 && visit(n.ID) {
			return found
		}
	}
	return nil
}

func (v *validator) topo() ([]string, []string) { return v.s.Topo() }

// fields propagates the record fields along the edges in order and checks
// that every field a node names or needs is produced upstream.
func (v *validator) fields(order []string) {
	out := map[string]map[string][]string{} // node -> output port -> fields
	known := map[string]map[string]bool{}   // node -> output port -> fields known
	for _, id := range order {
		n := v.s.Node(id)
		op := v.reg.Get(n.Op)
		if op == nil {
			continue
		}
		in := map[string][]string{}
		inKnown := map[string]bool{}
		for port, r := range n.Inputs {
			ref := ParseRef(r)
			src := v.s.Node(ref.Node)
			if src == nil || v.reg.Get(src.Op) == nil {
				continue
			}
			sp := v.reg.Get(src.Op).Output(ref.Port)
			if sp == nil {
				continue
			}
			in[port], inKnown[port] = out[ref.Node][sp.Name], known[ref.Node][sp.Name]
		}
		params := op.withDefaults(n.Params)
		for param, port := range op.FieldParams {
			if !inKnown[port] {
				continue
			}
			for _, f := range paramStrings(params[param]) {
				if !slices.Contains(in[port], f) {
					v.add(Finding{Code: CodeFieldNotProduced, Node: id, Port: port, Param: param,
						Message:    fmt.Sprintf("field %q is not produced upstream of input %s", f, port),
						Suggestion: closest("field", f, in[port])})
				}
			}
		}
		for port, need := range op.NeedsFields {
			if !inKnown[port] {
				continue
			}
			for _, f := range need {
				if !slices.Contains(in[port], f) {
					sugg := "add a node upstream that produces " + f
					if f == "score" {
						sugg = fmt.Sprintf("insert a judge node before %s (it reads %s)", id, n.Inputs[port])
					}
					v.add(Finding{Code: CodeFieldNotProduced, Node: id, Port: port,
						Message: fmt.Sprintf("operator %s needs field %q on input %s, which is not produced upstream", op.Name, f, port), Suggestion: sugg})
				}
			}
		}
		out[id], known[id] = map[string][]string{}, map[string]bool{}
		var produced map[string][]string
		if op.fields != nil {
			produced = op.fields(in, params)
		}
		for _, p := range op.Outputs {
			switch {
			case produced != nil:
				out[id][p.Name], known[id][p.Name] = produced[p.Name], true
			case len(op.Inputs) > 0:
				first := op.Inputs[0].Name
				out[id][p.Name], known[id][p.Name] = in[first], inKnown[first]
			}
		}
	}
}

func paramStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

// reach warns about nodes that get no data and nodes whose output nobody
// reads.
func (v *validator) reach() {
	consumed := map[string]bool{}
	for _, e := range v.s.edges() {
		consumed[e.from] = true
	}
	for _, n := range v.s.Nodes {
		op := v.reg.Get(n.Op)
		if op == nil {
			continue
		}
		if len(op.Inputs) > 0 && len(n.Inputs) == 0 {
			v.add(Finding{Code: CodeUnreachable, Severity: SevWarning, Node: n.ID,
				Message: fmt.Sprintf("node %s reads nothing: no data reaches it", n.ID), Suggestion: "connect its inputs or remove it"})
		}
		if consumed[n.ID] {
			continue
		}
		var dead []string
		for _, p := range op.Outputs {
			if !terminal[p.Type] {
				dead = append(dead, fmt.Sprintf("%s (%s)", p.Name, p.Type))
			}
		}
		if len(dead) > 0 {
			v.add(Finding{Code: CodeDeadEnd, Severity: SevWarning, Node: n.ID,
				Message:    fmt.Sprintf("nothing reads the output %s of %s", strings.Join(dead, ", "), n.ID),
				Suggestion: "connect it to a consumer (e.g. export or report) or remove the node"})
		}
	}
}
