package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"dialogfarm/internal/shutdown"
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

Every request needs the token, static files and event streams included. It
is random for each start unless --token or DIALOGFARM_TOKEN sets one (at least
16 characters; prefer the variable: other local users can read a command
line). serve prints the URL to open once, http://127.0.0.1:8765/?token=...:
the browser trades it for an HttpOnly, SameSite=Strict cookie. MCP clients
and scripts send the header Authorization: Bearer TOKEN, e.g. Claude Code's
.mcp.json {"mcpServers": {"dialogfarm": {"type": "http", "url":
"http://127.0.0.1:8765/mcp", "headers": {"Authorization": "Bearer
${DIALOGFARM_TOKEN}"}}}}, Codex's [mcp_servers.dialogfarm] url = "..." and
bearer_token_env_var = "DIALOGFARM_TOKEN", Cursor's "headers" as Claude
Code's.

Only requests naming this server are served: Host (and Origin, when sent)
must be a loopback name on the bound port or a name given with
--allowed-host; a web page whose DNS name was rebound to this machine gets
403, and so does a cross-origin request that changes state. Pipeline params
that name host paths (repos, logs, the load_* paths, profile files) must lie
under a --data-root (default: the current folder and --runs), at commit and
again at run time. A run's files are served as text, images or downloads
under a sandbox CSP, never as pages of this site. At most 64 event streams
are open at once; request bodies are capped at 4 MiB.

It binds 127.0.0.1:8765 by default. Any other --listen address must serve
TLS (--tls-cert, --tls-key): a token sent in the clear is anyone's on that
network. --insecure-http overrides this (and warns at every start), for a
network you trust alone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(cmd.Context()) },
	}
	f := cmd.Flags()
	f.String("listen", "127.0.0.1:8765", "address to listen on (--addr says the same); not loopback: needs --tls-cert and --tls-key")
	f.String("token", "", "token every request must carry (default: a random one printed at start; prefer DIALOGFARM_TOKEN to the flag)")
	f.StringSlice("allowed-host", nil, "a further name requests may give as Host, as NAME (any port) or NAME:PORT, e.g. behind a proxy (repeatable)")
	f.String("tls-cert", "", "TLS certificate (PEM) to serve HTTPS with")
	f.String("tls-key", "", "TLS private key (PEM) of --tls-cert")
	f.Bool("insecure-http", false, "serve a non-loopback --listen over plain HTTP (the token and the pipelines cross the network readable)")
	addStoreFlags(cmd)
	f.SetNormalizeFunc(serveAliases) // after addStoreFlags, whose farm flags set natsAliases
	return cmd
}

// serveAliases lets --addr, serve's old name for it, stand for --listen
// (and --creds for --nats-creds, as on every command with farm flags).
func serveAliases(f *pflag.FlagSet, name string) pflag.NormalizedName {
	if name == "addr" {
		name = "listen"
	}
	return natsAliases(f, name)
}

// serveToken is the token the flags set, or a new random one (generated
// says which).
func (a *app) serveToken() (token string, generated bool, err error) {
	if t := a.v.GetString("token"); t != "" {
		if len(t) < web.MinTokenLen {
			return "", false, fmt.Errorf("serve: --token (or DIALOGFARM_TOKEN) has %d characters; give at least %d", len(t), web.MinTokenLen)
		}
		return t, false, nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", false, fmt.Errorf("serve: make token: %w", err)
	}
	return hex.EncodeToString(b), true, nil
}

func (a *app) serve(ctx context.Context) error {
	addr := a.v.GetString("listen")
	cert, key := a.v.GetString("tls-cert"), a.v.GetString("tls-key")
	tls := cert != "" || key != ""
	if tls && (cert == "" || key == "") {
		return errors.New("serve: --tls-cert and --tls-key go together")
	}
	if !web.IsLoopback(addr) && !tls {
		if !a.v.GetBool("insecure-http") {
			return fmt.Errorf("serve: --listen %s is not a loopback address: serve it over TLS (--tls-cert, --tls-key), "+
				"or pass --insecure-http to send the token and the pipelines over that network in the clear", addr)
		}
		fmt.Fprintf(a.stderr, "WARNING: serving %s over plain HTTP (--insecure-http): anyone on that network can read the token and take over this server\n", addr)
	}
	token, generated, err := a.serveToken()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	store, runs, roots, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer runs.Wait()
	runs.OnFinish = func(info pipeline.RunInfo) {
		if err := pipeline.WriteDashboard(info.Spec, info.Nodes, info.Out, info.Status); err != nil {
			a.log.Warn("dashboard not written", zap.String("run", info.ID), zap.Error(err))
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	srv, err := web.New(store, runs, web.Options{Token: token, Addr: ln.Addr().String(), AllowedHosts: a.v.GetStringSlice("allowed-host"),
		Roots: roots, Secure: tls, ProfilesDir: filepath.Join(a.v.GetString("store"), "profiles")}, a.log)
	if err != nil {
		ln.Close()
		return err
	}
	stop := srv.Start(ctx)
	defer stop()
	// Event streams (the web UI's /events, MCP's GET) never go idle on
	// their own: their requests share a context that the shutdown cancels,
	// so a stop does not wait out the deadline for an open page or agent.
	streams, endStreams := context.WithCancel(context.WithoutCancel(ctx))
	defer endStreams()
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		BaseContext: func(net.Listener) context.Context { return streams }}
	hs.RegisterOnShutdown(endStreams)
	shutdown.CloseUnused(hs)
	scheme := "http"
	if tls {
		scheme = "https"
	}
	// Bound to every address, this machine opens it as 127.0.0.1; other
	// machines need a name given with --allowed-host.
	host := ln.Addr().String()
	if ip, port, err := net.SplitHostPort(host); err == nil && net.ParseIP(ip).IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", port)
	}
	url := scheme + "://" + host + "/"
	shown := token
	if !generated {
		shown = "<your token>" // the token the caller chose is not echoed
	}
	fmt.Fprintf(a.stdout, "dialogfarm serve: open %s?token=%s\n", url, shown)
	fmt.Fprintf(a.stdout, "MCP: %smcp with the header \"Authorization: Bearer %s\"\n", url, shown)
	fmt.Fprintf(a.stdout, "data roots (the host paths pipelines may name): %s\n", strings.Join(roots, ", "))
	errc := make(chan error, 1)
	go func() {
		if tls {
			errc <- hs.ServeTLS(ln, cert, key)
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer scancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: stopping the server: %w", err)
	}
	return nil
}
