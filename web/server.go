// Package web is the UI `dialogfarm serve` serves: the pipeline canvas
// (a vendored cytoscape + dagre graph, param forms, the validation panel,
// revision history and revert), the live run dashboard, a JSON API over
// the same store the MCP server edits, server-sent events so every open
// page follows every commit and run, and the MCP server itself at /mcp.
package web

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"dialogfarm/mcp"
	"dialogfarm/pipeline"
)

//go:embed static templates
var assets embed.FS

// Limits the server applies when Options leaves them zero.
const (
	// DefaultMaxStreams caps the event streams (/events and MCP's GET
	// streams) open at once; one more is refused with 503.
	DefaultMaxStreams = 64
	// DefaultMaxBodyBytes caps every request body.
	DefaultMaxBodyBytes = 4 << 20
	// MinTokenLen is the shortest token New accepts.
	MinTokenLen = 16
)

// Options configures the server.
type Options struct {
	// Token is required on every request, static files and event streams
	// included: as Authorization: Bearer TOKEN, or the cookie the token URL
	// (/?token=TOKEN) sets. New refuses one shorter than MinTokenLen.
	Token string
	// Addr is the address the server listens on (host:port): loopback
	// names and its IP are allowed Hosts on its port.
	Addr string
	// AllowedHosts are further names requests may give as Host (and
	// Origin): NAME (any port) or NAME:PORT.
	AllowedHosts []string
	// Roots are the data roots the store and the runs confine host paths
	// to (shown on the index; the default pipeline's repositories default
	// to the first).
	Roots []string
	// Secure marks the cookie Secure (the server speaks TLS).
	Secure bool
	// MaxStreams caps open event streams; MaxBodyBytes request bodies.
	MaxStreams   int
	MaxBodyBytes int64
	// ProfilesDir is where the profile editor saves profiles; "" saves
	// none (the editor still previews).
	ProfilesDir string
}

// Server serves the UI, the API and MCP over one store.
type Server struct {
	store   *pipeline.Store
	runs    *pipeline.Runs
	mcp     *mcp.Server
	opt     Options
	guard   *guard
	streams chan struct{}
	log     *zap.Logger
	pages   *template.Template
}

// New builds the server.
func New(store *pipeline.Store, runs *pipeline.Runs, opt Options, log *zap.Logger) (*Server, error) {
	if opt.MaxStreams <= 0 {
		opt.MaxStreams = DefaultMaxStreams
	}
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = DefaultMaxBodyBytes
	}
	g, err := newGuard(opt)
	if err != nil {
		return nil, err
	}
	s := &Server{store: store, runs: runs, mcp: mcp.New(store, runs, log), opt: opt, guard: g,
		streams: make(chan struct{}, opt.MaxStreams), log: log}
	s.pages = template.Must(template.New("pages").Funcs(pageFuncs).ParseFS(assets, "templates/*.tmpl"))
	return s, nil
}

// Start forwards store and run changes to MCP subscribers until the
// returned function is called.
func (s *Server) Start(ctx context.Context) func() { return s.mcp.Forward(ctx) }

// Handler is the whole site behind the guard (Host and Origin allow-list,
// token, body limit) and cross-origin protection.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /dashboard.css", s.dashboardCSS)
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /p/{name}", s.editor)
	mux.HandleFunc("GET /runs/{id}", s.runPage)
	mux.HandleFunc("GET /runs/{id}/panel", s.runPanel)
	mux.HandleFunc("GET /runs/{id}/files/{path...}", s.runFile)
	mux.HandleFunc("GET /events", s.stream(s.events))
	s.api(mux)
	s.createAPI(mux)
	s.profileRoutes(mux)
	// The guard checks Host on every route, so the SDK's own loopback
	// check (which would refuse an --allowed-host behind a local proxy)
	// is off; its body limit is the guard's.
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp.SDK() },
		&sdk.StreamableHTTPOptions{DisableLocalhostProtection: true, MaxRequestBodyBytes: s.opt.MaxBodyBytes, SessionTimeout: 30 * time.Minute})
	mcpStreams := s.stream(mcpHandler.ServeHTTP)
	mcpRoute := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet { // the long-lived server-to-client stream
			mcpStreams(w, r)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	mux.Handle("/mcp", mcpRoute)
	mux.Handle("/mcp/", mcpRoute)
	return s.guard.wrap(http.NewCrossOriginProtection().Handler(mux))
}

// stream admits a long-lived stream while fewer than MaxStreams are open,
// and refuses it with 503 otherwise.
func (s *Server) stream(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.streams <- struct{}{}:
			defer func() { <-s.streams }()
			next(w, r)
		default:
			w.Header().Set("Retry-After", "10")
			http.Error(w, fmt.Sprintf("too many event streams open (at most %d)", s.opt.MaxStreams), http.StatusServiceUnavailable)
		}
	}
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
