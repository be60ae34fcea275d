package main

import (
	"context"
	"fmt"
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
	f.StringSlice("data-root", nil, "a folder the host paths of pipeline params (repos, logs, load_* paths, profile files) may lie under (repeatable; default: the current folder and --runs)")
	addQueryModelFlags(cmd)
	addDriveFlags(cmd)
	addResponderFlags(cmd)
	addToolFlags(cmd)
}

// openStore opens the store and the runs manager the flags name; both
// confine host paths to the data roots it returns.
func (a *app) openStore(ctx context.Context) (*pipeline.Store, *pipeline.Runs, []string, error) {
	roots, err := a.dataRoots()
	if err != nil {
		return nil, nil, nil, err
	}
	reg := pipeline.NewRegistry()
	venv := a.validationEnv()
	venv.Roots = roots
	store, err := pipeline.OpenStore(a.v.GetString("store"), reg, venv)
	if err != nil {
		return nil, nil, nil, err
	}
	// The run's table never goes to stdout: over stdio that is the protocol.
	env := func(out string) (pipeline.RunEnv, func(), error) {
		e, done, err := a.runEnv(out)
		e.Table = nil
		e.Validate.Roots = roots
		return e, done, err
	}
	runs := pipeline.NewRuns(ctx, a.v.GetString("runs"), reg, env, a.log)
	return store, runs, roots, nil
}

// dataRoots are --data-root's folders, or the current folder and the
// runs folder, as absolute paths.
func (a *app) dataRoots() ([]string, error) {
	roots := a.v.GetStringSlice("data-root")
	if len(roots) == 0 {
		roots = []string{".", a.v.GetString("runs")}
	}
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("--data-root %s: %w", r, err)
		}
		out = append(out, abs)
	}
	return out, nil
}

func (a *app) mcpStdio(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	store, runs, _, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer runs.Wait() // after cancel (deferred later, runs first) ends them
	return mcp.New(store, runs, a.log).Run(ctx, &sdk.StdioTransport{})
}
