package pipeline

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"dialogfarm/dialog/vocab"

	"github.com/google/jsonschema-go/jsonschema"
)

// PortType is what flows along an edge: one of the shared nouns.
type PortType string

// Port types.
const (
	TypeProfile   PortType = "profile"
	TypePlan      PortType = "plan"
	TypeConfigs   PortType = "configs"
	TypeDialogues PortType = "dialogues"
	TypeSFT       PortType = "sft"
	TypeReport    PortType = "report"
)

// Port is a named, typed input or output of an operator.
type Port struct {
	Name     string   `json:"name"`
	Type     PortType `json:"type"`
	Optional bool     `json:"optional,omitempty"`
	Doc      string   `json:"doc,omitempty"`
}

// Resource kinds a param can name; Validate checks they exist.
const (
	ResourceDir      = "dir"      // a folder (a repository)
	ResourceFile     = "file"     // a file that must exist
	ResourceProfile  = "profile"  // a built-in profile name or a profile file
	ResourceEndpoint = "endpoint" // a model endpoint name from the config
	ResourcePlugin   = "plugin"   // an editor plugin (adapter) the driver knows
)

// Operator is one kind of node: its ports, its params' JSON schema, the
// fields it needs on its inputs and the resources its params name.
type Operator struct {
	Name     string             `json:"name"`
	Category string             `json:"category"`
	Doc      string             `json:"doc"`
	Inputs   []Port             `json:"inputs"`
	Outputs  []Port             `json:"outputs"`
	Params   *jsonschema.Schema `json:"params"`
	// FieldParams maps a param to the input port whose records must carry
	// the field(s) the param names.
	FieldParams map[string]string `json:"field_params,omitempty"`
	// NeedsFields are fields an input must carry whatever the params.
	NeedsFields map[string][]string `json:"needs_fields,omitempty"`
	// Resources maps a param to the kind of resource it names.
	Resources map[string]string `json:"resources,omitempty"`
	// fields computes the fields of each output from the inputs' fields
	// and the params (nil: outputs carry the first input's fields).
	fields func(in map[string][]string, p map[string]any) map[string][]string
	run    runFunc

	once     sync.Once
	resolved map[string]*jsonschema.Resolved
	resErr   error
}

// Input returns the input port called name, or nil.
func (o *Operator) Input(name string) *Port {
	for i := range o.Inputs {
		if o.Inputs[i].Name == name {
			return &o.Inputs[i]
		}
	}
	return nil
}

// Output returns the output port called name ("" for the only output), or
// nil.
func (o *Operator) Output(name string) *Port {
	if name == "" && len(o.Outputs) == 1 {
		return &o.Outputs[0]
	}
	for i := range o.Outputs {
		if o.Outputs[i].Name == name {
			return &o.Outputs[i]
		}
	}
	return nil
}

// paramSchemas resolves each property's schema once.
func (o *Operator) paramSchemas() (map[string]*jsonschema.Resolved, error) {
	o.once.Do(func() {
		o.resolved = map[string]*jsonschema.Resolved{}
		for name, s := range o.Params.Properties {
			r, err := s.Resolve(nil)
			if err != nil {
				o.resErr = fmt.Errorf("operator %s: param %s: %w", o.Name, name, err)
				return
			}
			o.resolved[name] = r
		}
	})
	return o.resolved, o.resErr
}

// withDefaults returns params with the schema's defaults filled in.
func (o *Operator) withDefaults(p map[string]any) map[string]any {
	out := make(map[string]any, len(o.Params.Properties))
	for name, s := range o.Params.Properties {
		if len(s.Default) > 0 {
			var v any
			if json.Unmarshal(s.Default, &v) == nil {
				out[name] = v
			}
		}
	}
	for k, v := range p {
		out[k] = v
	}
	return out
}

// Registry holds the operators by name.
type Registry struct {
	ops map[string]*Operator
}

// Get returns the operator called name, or nil.
func (r *Registry) Get(name string) *Operator { return r.ops[name] }

// Names lists the operators in order.
func (r *Registry) Names() []string { return sortedKeys(r.ops) }

// List returns the operators in name order.
func (r *Registry) List() []*Operator {
	var out []*Operator
	for _, n := range r.Names() {
		out = append(out, r.ops[n])
	}
	return out
}

// NewRegistry holds dialogfarm's operators: the stages and the data
// operators.
func NewRegistry() *Registry {
	r := &Registry{ops: map[string]*Operator{}}
	for _, o := range append(append(stageOperators(), datasetOperator()), dataOperators()...) {
		r.ops[o.Name] = o
	}
	return r
}

// Fields of the records on each port type, as Validate tracks them.
var (
	configFields   = []string{"id", "repo", "file", "language", "trigger", "instruction", "locale", "intent", "difficulty", "query_style"}
	dialogueFields = append(slices.Clone(configFields), "config_id", "status", "query", "answer")
	judgedFields   = append(slices.Clone(dialogueFields), "score")
)

// Schema helpers for the operators' params.

func object(required []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required,
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
}

func integer(doc string, lo, hi float64, def any) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Description: doc, Minimum: &lo, Maximum: &hi, Default: rawDefault(def)}
}

func number(doc string, lo, hi float64, def any) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "number", Description: doc, Minimum: &lo, Maximum: &hi, Default: rawDefault(def)}
}

func str(doc string, def any, enum ...string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Description: doc, Default: rawDefault(def)}
	for _, e := range enum {
		s.Enum = append(s.Enum, e)
	}
	return s
}

func strList(doc string, minItems int, enum ...string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "array", Description: doc, Items: str("", nil, enum...)}
	if minItems > 0 {
		s.MinItems = &minItems
	}
	return s
}

func boolean(doc string, def bool) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: doc, Default: rawDefault(def)}
}

func rawDefault(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	data, _ := json.Marshal(v)
	return data
}

// dims lists the profile dimensions (report cells).
func dims() []string { return vocab.Dimensions() }
