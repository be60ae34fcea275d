package profiles

import (
	"embed"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

//go:embed *.yaml
var builtin embed.FS

// Builtin returns the built-in profile name ("default", ...).
func Builtin(name string) (*Profile, error) {
	data, err := builtin.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("built-in profile %q: not found (have %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	return Parse(name+".yaml", data)
}

// BuiltinNames lists the built-in profiles.
func BuiltinNames() []string {
	entries, _ := builtin.ReadDir(".")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return out
}

// Load reads and validates the profile at path. A path without a directory
// or extension that names a built-in profile ("default") loads that one.
func Load(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && filepath.Base(path) == path && filepath.Ext(path) == "" {
			return Builtin(path)
		}
		return nil, fmt.Errorf("read profile %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse validates data as the profile file name. The error, if any, joins
// one *FieldError per problem, in line order.
func Parse(name string, data []byte) (*Profile, error) {
	ps := &parser{file: name}
	p := ps.parse(data)
	if len(ps.errs) == 0 {
		ps.errs = append(ps.errs, check(p)...)
	}
	if len(ps.errs) > 0 {
		return nil, joinSorted(ps.errs)
	}
	return p, nil
}

// Validate checks a profile built in code (the analyst's, for instance) by
// the same rules as Parse.
func (p *Profile) Validate() error {
	var errs []*dialog.FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, &dialog.FieldError{File: p.source(), Field: field, PathOnly: true, Msg: fmt.Sprintf(format, args...)})
	}
	for dim, ws := range p.Dimensions {
		if vocab.Values(dim) == nil {
			add("dimensions."+dim, "unknown dimension (known: %s)", strings.Join(vocab.Dimensions(), ", "))
			continue
		}
		seen := map[string]bool{}
		for _, w := range ws {
			field := "dimensions." + dim + "." + w.Value
			switch {
			case !vocab.Known(dim, w.Value):
				add(field, "unknown value %q (known: %s)", w.Value, strings.Join(vocab.Values(dim), ", "))
			case seen[w.Value]:
				add(field, "value listed twice")
			case w.Weight < 0 || math.IsNaN(w.Weight) || math.IsInf(w.Weight, 0):
				add(field, "weight %v must be a finite number >= 0", w.Weight)
			}
			seen[w.Value] = true
		}
	}
	for i, c := range p.Constraints {
		for part, m := range map[string]map[string][]string{"when": c.When, "require": c.Require, "exclude": c.Exclude} {
			for dim, vals := range m {
				for _, v := range vals {
					if !vocab.Known(dim, v) {
						add(fmt.Sprintf("constraints[%d].%s.%s", i, part, dim), "unknown value %q", v)
					}
				}
			}
		}
	}
	if len(errs) == 0 {
		errs = check(p)
	}
	if len(errs) > 0 {
		return joinSorted(errs)
	}
	return nil
}

func (p *Profile) source() string {
	if p.Source != "" {
		return p.Source
	}
	return "profile " + p.Name
}

func joinSorted(errs []*dialog.FieldError) error {
	slices.SortStableFunc(errs, func(a, b *dialog.FieldError) int { return a.Line - b.Line })
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}

type parser struct {
	file string
	errs []*dialog.FieldError
}

func (ps *parser) errorf(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	ps.errs = append(ps.errs, &dialog.FieldError{File: ps.file, Line: line, Field: field, PathOnly: true, Msg: fmt.Sprintf(format, args...)})
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func (ps *parser) parse(data []byte) *Profile {
	p := &Profile{Source: ps.file, Dimensions: map[string][]Weight{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := 0
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		ps.errs = append(ps.errs, &dialog.FieldError{File: ps.file, Line: line, Msg: "invalid YAML: " +
			strings.TrimPrefix(err.Error(), "yaml: ")})
		return p
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		ps.errorf(&doc, "", "a profile is a YAML mapping with name, seed, dimensions and constraints")
		return p
	}
	root := doc.Content[0]
	var dims *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "name":
			p.Name = ps.scalar(v, "name")
		case "description":
			p.Description = ps.scalar(v, "description")
		case "seed":
			s := ps.scalar(v, "seed")
			seed, err := strconv.ParseInt(s, 10, 64)
			if err != nil && s != "" {
				ps.errorf(v, "seed", "%q is not an integer", s)
			}
			p.Seed = seed
		case "dimensions":
			dims = v
			ps.dimensions(p, v)
		case "constraints":
			ps.constraints(p, v)
		default:
			ps.errorf(k, k.Value, "unknown field (known: name, description, seed, dimensions, constraints)")
		}
	}
	if dims == nil {
		ps.errorf(root, "dimensions", "missing")
	}
	return p
}

func (ps *parser) scalar(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode {
		ps.errorf(n, field, "must be a single value")
		return ""
	}
	return n.Value
}

func (ps *parser) dimensions(p *Profile, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		ps.errorf(n, "dimensions", "must map each dimension to its weighted values")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		dim := k.Value
		field := "dimensions." + dim
		if vocab.Values(dim) == nil {
			ps.errorf(k, field, "unknown dimension (known: %s)", strings.Join(vocab.Dimensions(), ", "))
			continue
		}
		if _, dup := p.Dimensions[dim]; dup {
			ps.errorf(k, field, "dimension listed twice")
			continue
		}
		if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
			ps.errorf(v, field, "must map values to weights, e.g. {%s: 1}", vocab.Values(dim)[0])
			p.Dimensions[dim] = nil
			continue
		}
		var ws []Weight
		for j := 0; j+1 < len(v.Content); j += 2 {
			vk, vv := v.Content[j], v.Content[j+1]
			vfield := field + "." + vk.Value
			val := vocab.Canonical(dim, vk.Value) // an older spelling reads as the value
			if val == "" {
				ps.errorf(vk, vfield, "unknown value %q (known: %s)", vk.Value, strings.Join(vocab.Values(dim), ", "))
				continue
			}
			if slices.ContainsFunc(ws, func(w Weight) bool { return w.Value == val }) {
				if val != vk.Value {
					ps.errorf(vk, vfield, "value listed twice (%s is another spelling of %s)", vk.Value, val)
				} else {
					ps.errorf(vk, vfield, "value listed twice")
				}
				continue
			}
			w, err := strconv.ParseFloat(ps.scalar(vv, vfield), 64)
			switch {
			case err != nil:
				ps.errorf(vv, vfield, "weight %q is not a number", vv.Value)
				continue
			case w < 0 || math.IsNaN(w) || math.IsInf(w, 0):
				ps.errorf(vv, vfield, "weight %s must be a finite number >= 0", vv.Value)
				continue
			}
			ws = append(ws, Weight{Value: val, Weight: w, Line: vk.Line})
		}
		p.Dimensions[dim] = ws
		if len(ws) > 0 && !slices.ContainsFunc(ws, func(w Weight) bool { return w.Weight > 0 }) {
			ps.errorf(k, field, "all weights are zero; at least one value needs a positive weight")
		}
	}
	for _, dim := range vocab.Dimensions() {
		if _, ok := p.Dimensions[dim]; !ok {
			ps.errorf(n, "dimensions."+dim, "missing (every profile lists all ten dimensions)")
		}
	}
}

func (ps *parser) constraints(p *Profile, n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		ps.errorf(n, "constraints", "must be a list")
		return
	}
	for i, item := range n.Content {
		field := fmt.Sprintf("constraints[%d]", i)
		if item.Kind != yaml.MappingNode {
			ps.errorf(item, field, "must be a mapping with when and require or exclude")
			continue
		}
		c := Constraint{Line: item.Line}
		whenGiven := false
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			switch k.Value {
			case "name":
				c.Name = ps.scalar(v, field+".name")
			case "when":
				whenGiven = len(v.Content) > 0
				c.When = ps.valueSets(v, field+".when")
			case "require":
				c.Require = ps.valueSets(v, field+".require")
			case "exclude":
				c.Exclude = ps.valueSets(v, field+".exclude")
			default:
				ps.errorf(k, field+"."+k.Value, "unknown field (known: name, when, require, exclude)")
			}
		}
		if !whenGiven {
			ps.errorf(item, field+".when", "missing or empty: a constraint applies when some dimensions take some values")
		}
		if len(c.Require) == 0 && len(c.Exclude) == 0 {
			ps.errorf(item, field, "needs require or exclude")
		}
		p.Constraints = append(p.Constraints, c)
	}
}

// valueSets reads {dim: value} or {dim: [values]}.
func (ps *parser) valueSets(n *yaml.Node, field string) map[string][]string {
	if n.Kind != yaml.MappingNode {
		ps.errorf(n, field, "must map dimensions to a value or a list of values")
		return nil
	}
	out := map[string][]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f := field + "." + k.Value
		if vocab.Values(k.Value) == nil {
			ps.errorf(k, f, "unknown dimension (known: %s)", strings.Join(vocab.Dimensions(), ", "))
			continue
		}
		var items []*yaml.Node
		switch v.Kind {
		case yaml.ScalarNode:
			items = []*yaml.Node{v}
		case yaml.SequenceNode:
			items = v.Content
		default:
			ps.errorf(v, f, "must be a value or a list of values")
			continue
		}
		if len(items) == 0 {
			ps.errorf(v, f, "empty list of values")
		}
		for _, it := range items {
			val := vocab.Canonical(k.Value, it.Value)
			if it.Kind != yaml.ScalarNode || val == "" {
				ps.errorf(it, f, "unknown value %q (known: %s)", it.Value, strings.Join(vocab.Values(k.Value), ", "))
				continue
			}
			out[k.Value] = append(out[k.Value], val)
		}
	}
	return out
}
