package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// pageCSP is the policy of the UI's own pages: scripts, styles and
// connections only from this origin, nothing inline, no frames, no
// plugins, forms only to this origin.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// fileCSP is the policy of a run's files: a sandbox with nothing
// allowed, so even a file a browser would render runs no script and has
// no access to this origin.
const fileCSP = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"

// tokenPage answers a page opened without the token.
const tokenPage = `<!doctype html><html><head><meta charset="utf-8"><title>dialogfarm: token needed</title></head><body>
<h1>This dialogfarm server needs its token</h1>
<p>Open the URL <code>dialogfarm serve</code> printed when it started (<code>http://…/?token=…</code>).</p>
<p>Opened it in this browser already? A page opened from a link on another site comes without the cookie it set:
<a id="continue" href="%s">continue here</a>.</p></body></html>
`

// guard is what every request passes before the routes: the Host and
// Origin allow-list, the token, and the body limit.
type guard struct {
	want    [32]byte // SHA-256 of the token
	cookie  string
	secure  bool
	port    string
	ips     []net.IP // the bound address when it is a specific IP
	names   map[string]bool
	named   map[string]bool // host:port entries
	maxBody int64
}

func newGuard(opt Options) (*guard, error) {
	if len(opt.Token) < MinTokenLen {
		return nil, fmt.Errorf("serve: a token of at least %d characters is required (%d given)", MinTokenLen, len(opt.Token))
	}
	host, port, err := net.SplitHostPort(opt.Addr)
	if err != nil {
		return nil, fmt.Errorf("serve: address %q: %w", opt.Addr, err)
	}
	g := &guard{want: sha256.Sum256([]byte(opt.Token)), cookie: "dialogfarm-token-" + port, secure: opt.Secure, port: port,
		names: map[string]bool{}, named: map[string]bool{}, maxBody: opt.MaxBodyBytes}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		g.ips = append(g.ips, ip)
	}
	for _, h := range opt.AllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		if n, p, err := net.SplitHostPort(h); err == nil {
			g.named[n+":"+p] = true
			continue
		}
		g.names[strings.Trim(h, "[]")] = true
	}
	return g, nil
}

// hostAllowed says whether a Host header (or an Origin's host) names this
// server: a loopback name or the bound IP on the bound port, or a name
// given with --allowed-host. A page whose DNS name was rebound to this
// machine names its own host and is refused.
func (g *guard) hostAllowed(hostport string) bool {
	hostport = strings.ToLower(hostport)
	name, port, err := net.SplitHostPort(hostport)
	if err != nil {
		name, port = strings.Trim(hostport, "[]"), ""
	}
	if g.named[name+":"+port] || g.names[name] {
		return true
	}
	if port != g.port && !(port == "" && (g.port == "80" && !g.secure || g.port == "443" && g.secure)) {
		return false
	}
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	for _, b := range g.ips {
		if b.Equal(ip) {
			return true
		}
	}
	return false
}

// originAllowed says whether an Origin header names an allowed host.
func (g *guard) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false // "null" (a sandboxed or opaque origin) among them
	}
	return g.hostAllowed(u.Host)
}

// tokenOK compares a presented token with the server's in constant time
// (both hashed, so not even the length shows).
func (g *guard) tokenOK(got string) bool {
	if got == "" {
		return false
	}
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], g.want[:]) == 1
}

// authorised says whether the request carries the token: as
// Authorization: Bearer, or in the cookie the token URL set.
func (g *guard) authorised(r *http.Request) bool {
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && g.tokenOK(strings.TrimSpace(bearer)) {
		return true
	}
	c, err := r.Cookie(g.cookie)
	return err == nil && g.tokenOK(c.Value)
}

// wrap checks every request before next sees it, and gives every
// response the headers that keep this origin's pages to themselves.
func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", pageCSP)
		if !g.hostAllowed(r.Host) {
			http.Error(w, fmt.Sprintf("host %q is not this server's: open it as http://127.0.0.1:%s/ or start serve with --allowed-host", r.Host, g.port), http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !g.originAllowed(o) {
			http.Error(w, fmt.Sprintf("cross-origin request from %q refused", o), http.StatusForbidden)
			return
		}
		if q := r.URL.Query(); q.Has("token") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			g.exchange(w, r, q)
			return
		}
		if !g.authorised(r) {
			h.Set("WWW-Authenticate", `Bearer realm="dialogfarm"`)
			if r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html") {
				// A page opened from a link on another site comes without the
				// SameSite=Strict cookie: a link from this origin brings it.
				h.Set("Content-Type", "text/html; charset=utf-8")
				h.Set("Cache-Control", "no-store")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintf(w, tokenPage, html.EscapeString(r.URL.RequestURI()))
				return
			}
			http.Error(w, "a token is required: open the URL dialogfarm serve printed (…/?token=…), or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, g.maxBody)
		}
		next.ServeHTTP(w, r)
	})
}

// exchange turns the token URL into the cookie, and sends the browser to
// the same page without the token (so it stays out of history and
// bookmarks). It answers with a page that refreshes to it rather than a
// redirect: a refresh is a navigation from this origin, so it carries the
// SameSite=Strict cookie even when the token URL was opened from a link
// on another site (a redirect in that navigation would not).
func (g *guard) exchange(w http.ResponseWriter, r *http.Request, q url.Values) {
	if !g.tokenOK(q.Get("token")) {
		http.Error(w, "wrong token", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: q.Get("token"), Path: "/", HttpOnly: true, Secure: g.secure, SameSite: http.SameSiteStrictMode})
	q.Del("token")
	// Only a path of this site: "//evil.example" would leave it.
	loc := (&url.URL{Path: "/" + strings.TrimLeft(r.URL.Path, "/\\")}).EscapedPath()
	if enc := q.Encode(); enc != "" {
		loc += "?" + enc
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
	loc = html.EscapeString(loc)
	fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=%s"><title>dialogfarm</title></head>
<body><p><a id="continue" href="%s">continue</a></p></body></html>
`, loc, loc)
}
