package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"dialogfarm/pipeline"
	"dialogfarm/web"
)

func serveCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the pipeline editor, the run dashboards and MCP over HTTP",
		Long: `serve serves, from one pipeline store (--store): the web UI (the pipeline as a
graph with param forms, validation, history and revert; live run dashboards),
its JSON API, server-sent events, and MCP (streamable HTTP) at /mcp. An
agent's commit shows on every open canvas and a person's edit is what the
next get_pipeline returns.

It binds 127.0.0.1 by default. Bound to any other address it requires a
token (--token or DIALOGFARM_TOKEN; one is generated and printed when
neither is set) for the UI, the API and MCP. Cross-origin requests that
change state are refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(cmd.Context()) },
	}
	cmd.Flags().String("addr", "127.0.0.1:8765", "address to listen on")
	cmd.Flags().String("token", "", "token required on every request (required when --addr is not loopback)")
	addStoreFlags(cmd)
	return cmd
}

func (a *app) serve(ctx context.Context) error {
	addr, token := a.v.GetString("addr"), a.v.GetString("token")
	if !web.IsLoopback(addr) && token == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return fmt.Errorf("serve: make token: %w", err)
		}
		token = hex.EncodeToString(b)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	store, runs, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer runs.Wait()
	runs.OnFinish = func(info pipeline.RunInfo) {
		if err := pipeline.WriteDashboard(info.Spec, info.Nodes, info.Out, info.Status); err != nil {
			a.log.Warn("dashboard not written", zap.String("run", info.ID), zap.Error(err))
		}
	}
	srv := web.New(store, runs, web.Options{Token: token}, a.log)
	stop := srv.Start(ctx)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/"
	if token != "" {
		fmt.Fprintf(a.stdout, "dialogfarm serve: %s?token=%s (MCP: %smcp with Authorization: Bearer %s)\n", url, token, url, token)
	} else {
		fmt.Fprintf(a.stdout, "dialogfarm serve: %s (MCP: %smcp)\n", url, url)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer scancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
