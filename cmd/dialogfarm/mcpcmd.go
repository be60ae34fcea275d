package main

import (
	"context"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"dialogfarm/mcp"
	"dialogfarm/pipeline"
)

func mcpCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the pipeline store to an MCP client over stdio",
		Long: `mcp speaks the Model Context Protocol on stdin/stdout: agents list and describe
operators, build and edit pipelines in --store (every edit a revisioned batch,
validated before commit), and run them into --runs/NAME. serve shares the same
store with the web UI and serves MCP over HTTP.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.mcpStdio(cmd.Context()) },
	}
	addStoreFlags(cmd)
	return cmd
}

// addStoreFlags adds the flags of the pipeline store and its runs, and
// what a run needs (responder, drive, query model, tools).
func addStoreFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("store", filepath.Join(".dialogfarm", "pipelines"), "folder of the pipeline journals")
	f.String("runs", "runs", "folder the runs write into (one folder per pipeline)")
	addQueryModelFlags(cmd)
	addDriveFlags(cmd)
	addResponderFlags(cmd)
	addToolFlags(cmd)
}

// openStore opens the store and the runs manager the flags name.
func (a *app) openStore(ctx context.Context) (*pipeline.Store, *pipeline.Runs, error) {
	reg := pipeline.NewRegistry()
	store, err := pipeline.OpenStore(a.v.GetString("store"), reg, a.validationEnv())
	if err != nil {
		return nil, nil, err
	}
	// The run's table never goes to stdout: over stdio that is the protocol.
	env := func(out string) (pipeline.RunEnv, func(), error) {
		e, done, err := a.runEnv(out)
		e.Table = nil
		return e, done, err
	}
	runs := pipeline.NewRuns(ctx, a.v.GetString("runs"), reg, env, a.log)
	return store, runs, nil
}

func (a *app) mcpStdio(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	store, runs, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer runs.Wait() // after cancel (deferred later, runs first) ends them
	return mcp.New(store, runs, a.log).Run(ctx, &sdk.StdioTransport{})
}
