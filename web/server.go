// Package web is the UI `dialogfarm serve` serves: the pipeline canvas
// (a vendored cytoscape + dagre graph, param forms, the validation panel,
// revision history and revert), the live run dashboard, a JSON API over
// the same store the MCP server edits, server-sent events so every open
// page follows every commit and run, and the MCP server itself at /mcp.
package web

import (
	"context"
	"crypto/subtle"
	"embed"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"dialogfarm/mcp"
	"dialogfarm/pipeline"
)

//go:embed static templates
var assets embed.FS

// Options configures the server.
type Options struct {
	// Token, when set, is required on every request: as a Bearer
	// Authorization header, the dialogfarm_token cookie, or ?token= once
	// (which sets the cookie).
	Token string
}

// Server serves the UI, the API and MCP over one store.
type Server struct {
	store *pipeline.Store
	runs  *pipeline.Runs
	mcp   *mcp.Server
	opt   Options
	log   *zap.Logger
	pages *template.Template
}

// New builds the server.
func New(store *pipeline.Store, runs *pipeline.Runs, opt Options, log *zap.Logger) *Server {
	s := &Server{store: store, runs: runs, mcp: mcp.New(store, runs, log), opt: opt, log: log}
	s.pages = template.Must(template.New("pages").Funcs(pageFuncs).ParseFS(assets, "templates/*.tmpl"))
	return s
}

// Start forwards store and run changes to MCP subscribers until the
// returned function is called.
func (s *Server) Start(ctx context.Context) func() { return s.mcp.Forward(ctx) }

// Handler is the whole site behind token and cross-origin checks.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /p/{name}", s.editor)
	mux.HandleFunc("GET /runs/{id}", s.runPage)
	mux.HandleFunc("GET /runs/{id}/panel", s.runPanel)
	mux.HandleFunc("GET /runs/{id}/files/{path...}", s.runFile)
	mux.HandleFunc("GET /events", s.events)
	s.api(mux)
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp.SDK() }, nil)
	mux.Handle("/mcp", mcpHandler)
	mux.Handle("/mcp/", mcpHandler)
	return http.NewCrossOriginProtection().Handler(s.auth(mux))
}

// auth requires the token when one is set.
func (s *Server) auth(next http.Handler) http.Handler {
	if s.opt.Token == "" {
		return next
	}
	want := []byte(s.opt.Token)
	ok := func(got string) bool { return got != "" && subtle.ConstantTimeCompare([]byte(got), want) == 1 }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query().Get("token"); ok(q) {
			http.SetCookie(w, &http.Cookie{Name: "dialogfarm_token", Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			u := *r.URL
			v := u.Query()
			v.Del("token")
			u.RawQuery = v.Encode()
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
		if bearer, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found && ok(bearer) {
			next.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie("dialogfarm_token"); err == nil && ok(c.Value) {
			next.ServeHTTP(w, r)
			return
		}
		http.Error(w, "a token is required: open the URL serve printed (…?token=…) or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
	})
}

// IsLoopback says whether addr (host:port) binds only the loopback
// interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
