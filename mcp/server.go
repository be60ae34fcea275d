// Package mcp is dialogfarm's MCP server: agents list and describe the
// operators, build and edit pipelines in the shared store (every edit a
// revisioned batch, validated before commit), validate them, and run them,
// over stdio (`dialogfarm mcp`) or streamable HTTP (`dialogfarm serve`).
// The store is the one the web UI edits, so an agent's commit and a
// person's edit see each other.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"dialogfarm/pipeline"
)

// Version is the server's version in the MCP handshake.
const Version = "0.1.0"

// Server serves the store and runs to MCP clients.
type Server struct {
	store *pipeline.Store
	runs  *pipeline.Runs
	log   *zap.Logger
	srv   *sdk.Server
}

const instructions = `dialogfarm builds SFT data for code assistants. Pipelines are DAGs of operators.
Workflow: list_operators / describe_operator → get_pipeline (note its revision) → edit with add_node,
connect, set_param, remove_node or apply_mutations, passing base_revision → read the findings: a batch
with an error finding or a stale base_revision is not committed (each finding says the node, port or
param and a suggestion) → run_pipeline (dry_run first) → get_run_status. Read the skills resource
dialogfarm://skills for recipes.`

// New builds the MCP server over store and runs.
func New(store *pipeline.Store, runs *pipeline.Runs, log *zap.Logger) *Server {
	s := &Server{store: store, runs: runs, log: log}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "dialogfarm", Version: Version}, &sdk.ServerOptions{
		Instructions:       instructions,
		SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	s.addTools()
	s.addResources()
	return s
}

// SDK returns the underlying server, for transports.
func (s *Server) SDK() *sdk.Server { return s.srv }

// Run serves one transport until it closes or ctx ends (stdio: until
// stdin closes).
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	stop := s.Forward(ctx)
	defer stop()
	return s.srv.Run(ctx, t)
}

// Forward tells subscribed clients when a pipeline or run changes, until
// the returned function is called.
func (s *Server) Forward(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	changes, unsub := s.store.Subscribe()
	var runs <-chan string
	unsubRuns := func() {}
	if s.runs != nil {
		runs, unsubRuns = s.runs.Subscribe()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var uri string
			select {
			case <-ctx.Done():
				return
			case c := <-changes:
				uri = "dialogfarm://pipelines/" + c.Pipeline
			case id := <-runs:
				uri = "dialogfarm://runs/" + id
			}
			_ = s.srv.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: uri})
		}
	}()
	return func() {
		cancel()
		<-done
		unsub()
		unsubRuns()
	}
}

// author names the client that made an edit.
func author(req *sdk.CallToolRequest) string {
	if req != nil && req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
			return "agent:" + p.ClientInfo.Name
		}
	}
	return "agent"
}

// summary is the text an agent reads first for a batch result.
func summary(r pipeline.ApplyResult) string {
	var b strings.Builder
	switch {
	case r.Conflict != nil:
		b.WriteString("CONFLICT, nothing committed: " + r.Conflict.Message)
	case r.Committed:
		fmt.Fprintf(&b, "committed: pipeline %s is now at revision %d", r.Pipeline, r.Revision)
	case r.DryRun && len(pipeline.Errors(r.Findings)) == 0:
		fmt.Fprintf(&b, "dry run: the batch would commit on revision %d", r.Revision)
	default:
		fmt.Fprintf(&b, "REJECTED, nothing committed (pipeline %s stays at revision %d)", r.Pipeline, r.Revision)
	}
	for _, f := range r.Findings {
		b.WriteString("\n- " + f.String())
	}
	return b.String()
}

func textResult(text string, isErr bool) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isErr}
}

// jsonText is v as indented JSON.
func jsonText(v any) string {
	data, _ := json.MarshalIndent(v, "", "  ")
	return string(data)
}

// notFound turns store errors into messages with what exists.
func notFound(err error) error {
	if errors.Is(err, pipeline.ErrNoPipeline) {
		return fmt.Errorf("%w; create one with apply_mutations or add_node and base_revision 0", err)
	}
	return err
}
