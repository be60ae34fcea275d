package mcp

import (
	"context"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"dialogfarm/pipeline"
)

// Tool inputs and outputs. Schemas are inferred from these structs and
// inputs are validated by the SDK before a handler runs.

type listOperatorsIn struct {
	Category string `json:"category,omitempty" jsonschema:"only this category: source, stage or data"`
}

type operatorSummary struct {
	Name     string          `json:"name"`
	Category string          `json:"category"`
	Doc      string          `json:"doc"`
	Inputs   []pipeline.Port `json:"inputs"`
	Outputs  []pipeline.Port `json:"outputs"`
	Params   []string        `json:"params"`
}

type listOperatorsOut struct {
	Operators []operatorSummary `json:"operators"`
}

type describeIn struct {
	Name string `json:"name" jsonschema:"operator name"`
}

type pipelineIn struct {
	Pipeline string `json:"pipeline" jsonschema:"pipeline name"`
}

type pipelineOut struct {
	Pipeline string             `json:"pipeline"`
	Revision int                `json:"revision"`
	Spec     *pipeline.Spec     `json:"spec"`
	YAML     string             `json:"yaml"`
	Findings []pipeline.Finding `json:"findings"`
}

type listPipelinesOut struct {
	Pipelines []pipelineRev `json:"pipelines"`
}

type pipelineRev struct {
	Name     string `json:"name"`
	Revision int    `json:"revision"`
}

type validateIn struct {
	Pipeline string `json:"pipeline,omitempty" jsonschema:"a stored pipeline to validate"`
	YAML     string `json:"yaml,omitempty" jsonschema:"or a pipeline file's text"`
}

type validateOut struct {
	Valid    bool               `json:"valid"`
	Findings []pipeline.Finding `json:"findings"`
}

// editIn is what every single-mutation tool shares.
type editIn struct {
	Pipeline     string `json:"pipeline" jsonschema:"pipeline name (a new name with base_revision 0 creates it)"`
	BaseRevision int    `json:"base_revision" jsonschema:"the revision your edit is based on (from get_pipeline)"`
	DryRun       bool   `json:"dry_run,omitempty" jsonschema:"validate only, commit nothing"`
}

type addNodeIn struct {
	editIn
	Node     string            `json:"node" jsonschema:"new node id: lower-case letters, digits, _ and -"`
	Operator string            `json:"operator" jsonschema:"operator name (list_operators)"`
	Params   map[string]any    `json:"params,omitempty" jsonschema:"params (describe_operator gives their schema)"`
	Inputs   map[string]string `json:"inputs,omitempty" jsonschema:"input port to producer: node or node.port"`
}

type connectIn struct {
	editIn
	Node    string `json:"node" jsonschema:"the consuming node"`
	Port    string `json:"port" jsonschema:"its input port"`
	From    string `json:"from" jsonschema:"the producer: node or node.port"`
	Replace bool   `json:"replace,omitempty" jsonschema:"replace the port's current producer"`
}

type setParamIn struct {
	editIn
	Node  string `json:"node"`
	Param string `json:"param"`
	Value any    `json:"value,omitempty" jsonschema:"the new value; omit or null to remove the param"`
}

type removeNodeIn struct {
	editIn
	Node string `json:"node"`
}

type applyIn struct {
	Pipeline string `json:"pipeline"`
	pipeline.Batch
}

type revertIn struct {
	Pipeline     string `json:"pipeline"`
	To           int    `json:"to" jsonschema:"the revision whose pipeline to restore"`
	BaseRevision int    `json:"base_revision"`
}

type historyOut struct {
	Pipeline string           `json:"pipeline"`
	Entries  []pipeline.Entry `json:"entries"`
}

type runIn struct {
	Pipeline string `json:"pipeline"`
	DryRun   bool   `json:"dry_run,omitempty" jsonschema:"validate and show the node order, run nothing"`
	Limit    int    `json:"limit,omitempty" jsonschema:"drive at most this many configs per drive node (0: all)"`
}

type runIDIn struct {
	RunID string `json:"run_id"`
}

type listRunsOut struct {
	Runs []pipeline.RunInfo `json:"runs"`
}

func (s *Server) addTools() {
	sdk.AddTool(s.srv, &sdk.Tool{Name: "list_operators", Description: "List the operators a pipeline node can use: ports (typed by profile, plan, configs, dialogues, sft, report) and param names."}, s.listOperators)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "describe_operator", Description: "One operator in full: its ports, its params as a JSON schema (types, ranges, enums, defaults), the fields it needs and the resources its params name."}, s.describeOperator)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "list_pipelines", Description: "List the stored pipelines and their revisions."}, s.listPipelines)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "get_pipeline", Description: "A stored pipeline: its revision (pass it as base_revision when editing), its nodes, its YAML and its current findings."}, s.getPipeline)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "validate", Description: "Validate a stored pipeline or a pipeline file's YAML: every finding has a code, the node/port/param and a suggestion."}, s.validate)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "add_node", Description: "Add a node (operator, params, inputs) as one revisioned edit; rejected with findings if the result does not validate."}, s.addNode)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "connect", Description: "Connect a node's input port to a producer (node or node.port). A port already connected needs replace: true."}, s.connect)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "set_param", Description: "Set (or, with no value, remove) one param of a node."}, s.setParam)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "remove_node", Description: "Remove a node. Nodes reading it must be reconnected in the same batch (use apply_mutations)."}, s.removeNode)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "apply_mutations", Description: "Apply a batch of mutations all or nothing: {base_revision, mutations:[{op: add_node|remove_node|set_param|connect|disconnect|rename_node|replace, ...}], dry_run}. A stale base_revision is a conflict naming what changed since."}, s.apply)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "history", Description: "The journal of a pipeline: every committed batch with its revision, author, message and the nodes it touched."}, s.history)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "revert", Description: "Commit, as a new revision, the pipeline as it was at an earlier revision."}, s.revert)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "run_pipeline", Description: "Run a stored pipeline in the background (dry_run: validate and show the order only; limit: configs per drive node). Unchanged nodes are not run again."}, s.runPipeline)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "get_run_status", Description: "A run's status: each node's state, drive progress (done/total, dialogues per minute, ETA), error."}, s.runStatus)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "list_runs", Description: "The runs started by serve or mcp over this runs folder (kept across restarts; one that was running when its server stopped is 'interrupted'), newest first, then the run folders dialogfarm run made there (external: true)."}, s.listRuns)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "cancel_run", Description: "Cancel a running run; what it recorded stays and a later run resumes."}, s.cancelRun)
}

func (s *Server) listOperators(_ context.Context, _ *sdk.CallToolRequest, in listOperatorsIn) (*sdk.CallToolResult, listOperatorsOut, error) {
	var out listOperatorsOut
	for _, op := range s.store.Registry().List() {
		if in.Category != "" && op.Category != in.Category {
			continue
		}
		var params []string
		for name := range op.Params.Properties {
			params = append(params, name)
		}
		slices.Sort(params)
		out.Operators = append(out.Operators, operatorSummary{op.Name, op.Category, op.Doc, op.Inputs, op.Outputs, params})
	}
	return nil, out, nil
}

// operatorDetail is describe_operator's answer.
type operatorDetail struct {
	operatorSummary
	ParamSchema any                 `json:"param_schema"`
	FieldParams map[string]string   `json:"field_params,omitempty"`
	NeedsFields map[string][]string `json:"needs_fields,omitempty"`
	Resources   map[string]string   `json:"resources,omitempty"`
}

func (s *Server) describeOperator(_ context.Context, _ *sdk.CallToolRequest, in describeIn) (*sdk.CallToolResult, operatorDetail, error) {
	op := s.store.Registry().Get(in.Name)
	if op == nil {
		return nil, operatorDetail{}, fmt.Errorf("unknown operator %q; %s", in.Name, pipeline.Closest("operator", in.Name, s.store.Registry().Names()))
	}
	var params []string
	for name := range op.Params.Properties {
		params = append(params, name)
	}
	slices.Sort(params)
	return nil, operatorDetail{operatorSummary: operatorSummary{op.Name, op.Category, op.Doc, op.Inputs, op.Outputs, params},
		ParamSchema: op.Params, FieldParams: op.FieldParams, NeedsFields: op.NeedsFields, Resources: op.Resources}, nil
}

func (s *Server) listPipelines(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, listPipelinesOut, error) {
	out := listPipelinesOut{Pipelines: []pipelineRev{}}
	list := s.store.List()
	for _, name := range sortedNames(list) {
		out.Pipelines = append(out.Pipelines, pipelineRev{name, list[name]})
	}
	return nil, out, nil
}

func (s *Server) getPipeline(_ context.Context, _ *sdk.CallToolRequest, in pipelineIn) (*sdk.CallToolResult, pipelineOut, error) {
	spec, rev, err := s.store.Get(in.Pipeline)
	if err != nil {
		return nil, pipelineOut{}, notFound(err)
	}
	data, err := spec.YAML()
	if err != nil {
		return nil, pipelineOut{}, err
	}
	return nil, pipelineOut{Pipeline: in.Pipeline, Revision: rev, Spec: spec, YAML: string(data), Findings: nonNil(s.store.Validate(spec))}, nil
}

func (s *Server) validate(_ context.Context, _ *sdk.CallToolRequest, in validateIn) (*sdk.CallToolResult, validateOut, error) {
	var spec *pipeline.Spec
	switch {
	case in.YAML != "":
		sp, err := pipeline.ParseSpec("yaml", []byte(in.YAML))
		if err != nil {
			return nil, validateOut{}, err
		}
		spec = sp
	case in.Pipeline != "":
		sp, _, err := s.store.Get(in.Pipeline)
		if err != nil {
			return nil, validateOut{}, notFound(err)
		}
		spec = sp
	default:
		return nil, validateOut{}, fmt.Errorf("give pipeline (a stored name) or yaml")
	}
	fs := nonNil(s.store.Validate(spec))
	return nil, validateOut{Valid: len(pipeline.Errors(fs)) == 0, Findings: fs}, nil
}

// edit applies one batch and reports it as text plus the structured
// result.
func (s *Server) edit(req *sdk.CallToolRequest, name string, b pipeline.Batch) (*sdk.CallToolResult, pipeline.ApplyResult, error) {
	b.Author = author(req)
	res, err := s.store.Apply(name, b)
	if err != nil {
		return nil, res, notFound(err)
	}
	res.Findings = nonNil(res.Findings)
	failed := !res.Committed && !(res.DryRun && res.Conflict == nil && len(pipeline.Errors(res.Findings)) == 0)
	r := textResult(summary(res), failed)
	r.StructuredContent = res
	return r, res, nil
}

func (s *Server) addNode(_ context.Context, req *sdk.CallToolRequest, in addNodeIn) (*sdk.CallToolResult, pipeline.ApplyResult, error) {
	return s.edit(req, in.Pipeline, pipeline.Batch{BaseRevision: in.BaseRevision, DryRun: in.DryRun, Message: "add " + in.Node,
		Mutations: []pipeline.Mutation{{Op: pipeline.MutAddNode, Node: in.Node, Operator: in.Operator, Params: in.Params, Inputs: in.Inputs}}})
}

func (s *Server) connect(_ context.Context, req *sdk.CallToolRequest, in connectIn) (*sdk.CallToolResult, pipeline.ApplyResult, error) {
	return s.edit(req, in.Pipeline, pipeline.Batch{BaseRevision: in.BaseRevision, DryRun: in.DryRun, Message: fmt.Sprintf("connect %s.%s ← %s", in.Node, in.Port, in.From),
		Mutations: []pipeline.Mutation{{Op: pipeline.MutConnect, Node: in.Node, Port: in.Port, From: in.From, Replace: in.Replace}}})
}

func (s *Server) setParam(_ context.Context, req *sdk.CallToolRequest, in setParamIn) (*sdk.CallToolResult, pipeline.ApplyResult, error) {
	return s.edit(req, in.Pipeline, pipeline.Batch{BaseRevision: in.BaseRevision, DryRun: in.DryRun, Message: fmt.Sprintf("set %s.%s", in.Node, in.Param),
		Mutations: []pipeline.Mutation{{Op: pipeline.MutSetParam, Node: in.Node, Param: in.Param, Value: in.Value}}})
}

func (s *Server) removeNode(_ context.Context, req *sdk.CallToolRequest, in removeNodeIn) (*sdk.CallToolResult, pipeline.ApplyResult, error) {
	return s.edit(req, in.Pipeline, pipeline.Batch{BaseRevision: in.BaseRevision, DryRun: in.DryRun, Message: "remove " + in.Node,
		Mutations: []pipeline.Mutation{{Op: pipeline.MutRemoveNode, Node: in.Node}}})
}

func (s *Server) apply(_ context.Context, req *sdk.CallToolRequest, in applyIn) (*sdk.CallToolResult, pipeline.ApplyResult, error) {
	return s.edit(req, in.Pipeline, in.Batch)
}

func (s *Server) history(_ context.Context, _ *sdk.CallToolRequest, in pipelineIn) (*sdk.CallToolResult, historyOut, error) {
	h, err := s.store.History(in.Pipeline)
	if err != nil {
		return nil, historyOut{}, notFound(err)
	}
	return nil, historyOut{Pipeline: in.Pipeline, Entries: h}, nil
}

func (s *Server) revert(_ context.Context, req *sdk.CallToolRequest, in revertIn) (*sdk.CallToolResult, pipeline.ApplyResult, error) {
	res, err := s.store.Revert(in.Pipeline, in.To, in.BaseRevision, author(req))
	if err != nil {
		return nil, res, notFound(err)
	}
	res.Findings = nonNil(res.Findings)
	r := textResult(summary(res), !res.Committed)
	r.StructuredContent = res
	return r, res, nil
}

func (s *Server) runPipeline(_ context.Context, _ *sdk.CallToolRequest, in runIn) (*sdk.CallToolResult, pipeline.RunInfo, error) {
	if s.runs == nil {
		return nil, pipeline.RunInfo{}, fmt.Errorf("this server cannot run pipelines")
	}
	spec, rev, err := s.store.Get(in.Pipeline)
	if err != nil {
		return nil, pipeline.RunInfo{}, notFound(err)
	}
	info, err := s.runs.Start(in.Pipeline, spec, rev, in.DryRun, in.Limit)
	return nil, info, err
}

func (s *Server) runStatus(_ context.Context, _ *sdk.CallToolRequest, in runIDIn) (*sdk.CallToolResult, pipeline.RunInfo, error) {
	if s.runs == nil {
		return nil, pipeline.RunInfo{}, fmt.Errorf("this server runs nothing")
	}
	info, err := s.runs.Get(in.RunID)
	return nil, info, err
}

func (s *Server) listRuns(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, listRunsOut, error) {
	out := listRunsOut{Runs: []pipeline.RunInfo{}}
	if s.runs != nil {
		out.Runs = append(out.Runs, s.runs.List()...)
	}
	return nil, out, nil
}

func (s *Server) cancelRun(_ context.Context, _ *sdk.CallToolRequest, in runIDIn) (*sdk.CallToolResult, pipeline.RunInfo, error) {
	if s.runs == nil {
		return nil, pipeline.RunInfo{}, fmt.Errorf("this server runs nothing")
	}
	info, err := s.runs.Cancel(in.RunID)
	return nil, info, err
}

func nonNil(fs []pipeline.Finding) []pipeline.Finding {
	if fs == nil {
		return []pipeline.Finding{}
	}
	return fs
}

func sortedNames(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
