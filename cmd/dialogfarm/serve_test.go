package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// served is `dialogfarm serve` running in this process.
type served struct {
	url, token string
	lines      []string
}

// startServe runs serve with args on a free loopback port in dir, and
// reads the lines it prints at start.
func startServe(t *testing.T, dir string, env map[string]string, args ...string) *served {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	t.Chdir(dir)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		err := run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0", "--root", absRepoRoot(t)}, args...), pw, &stderr)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, stderr.String())
		}
	})
	s := &served{}
	sc := bufio.NewScanner(pr)
	for len(s.lines) < 3 && sc.Scan() {
		s.lines = append(s.lines, sc.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := regexp.MustCompile(`open (https?://127\.0\.0\.1:\d+/)\?token=(\S+)`).FindStringSubmatch(strings.Join(s.lines, "\n"))
	if m == nil {
		t.Fatalf("serve printed %q\n%s", s.lines, stderr.String())
	}
	s.url, s.token = m[1], m[2]
	return s
}

// mcpSession connects an MCP client to the served /mcp with the token as a
// bearer; the caller closes it.
func (s *served) mcpSession(t *testing.T) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "serve-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: s.url + "mcp",
		HTTPClient: &http.Client{Transport: headerTransport{"Authorization": "Bearer " + s.token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func absRepoRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// TestServeTokenURLAndMCP: serve prints the token URL; a browser-like
// client that opens it gets the cookie and the API; without it, 401; an
// MCP client passes the token as a bearer and its edit naming a folder
// outside the data roots (the home folder) is refused with the finding.
func TestServeTokenURLAndMCP(t *testing.T) {
	s := startServe(t, t.TempDir(), nil)
	if len(s.token) != 64 {
		t.Fatalf("generated token %q", s.token)
	}
	if resp, err := http.Get(s.url + "api/pipelines"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %v %v", resp, err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(s.url + "?token=" + s.token)
	if err != nil || resp.StatusCode != 200 || len(resp.Cookies()) != 1 {
		t.Fatalf("token URL: %v %v", resp, err)
	}
	if resp, err := browser.Get(s.url + "api/pipelines"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("with the cookie: %v %v", resp, err)
	}

	cs := s.mcpSession(t)
	defer cs.Close()
	home, _ := os.UserHomeDir()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "apply_mutations", Arguments: map[string]any{"pipeline": "leak", "base_revision": 0,
		"mutations": []any{
			map[string]any{"op": "add_node", "node": "profile", "operator": "profile", "params": map[string]any{"name": "default"}},
			map[string]any{"op": "add_node", "node": "plan", "operator": "plan", "params": map[string]any{"n": 2}, "inputs": map[string]any{"profile": "profile"}},
			map[string]any{"op": "add_node", "node": "configs", "operator": "configs", "params": map[string]any{"repos": []any{home}}, "inputs": map[string]any{"plan": "plan"}},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(data), `"committed":false`) || !strings.Contains(string(data), `"code":"PATH_OUTSIDE_ROOTS"`) ||
		!strings.Contains(string(data), `"node":"configs","param":"repos"`) {
		t.Fatalf("repos=$HOME over MCP: %s", data)
	}
}

// TestServeDataRootFlag: --data-root replaces the default roots, and
// what lies under it may be named.
// TestServeStopsWithStreamsOpen: a web page's event stream and an MCP
// agent's session stay open while serve is stopped; the stop ends them and
// serve returns no error (before, it waited out its 5 s deadline on them).
func TestServeStopsWithStreamsOpen(t *testing.T) {
	var open []io.Closer
	t.Cleanup(func() { // runs after serve's own cleanup, which checks its error
		for _, c := range open {
			_ = c.Close()
		}
	})
	s := startServe(t, t.TempDir(), nil)
	req, _ := http.NewRequest(http.MethodGet, s.url+"events", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("events: %v %v", resp, err)
	}
	open = append(open, resp.Body)
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || !strings.HasPrefix(line, ": connected") {
		t.Fatalf("events stream began %q %v", line, err)
	}
	cs := s.mcpSession(t)
	open = append(open, cs)
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
}

// TestServeStopsWithAnUnusedConnection: a connection that never sent a
// request (browsers open such sockets ahead of need, and Go's HTTP client
// keeps one it dialled when another freed up first) is open while serve is
// stopped; serve returns at once and no error (before, http.Server.Shutdown
// counted it as busy until it was 5 s old, which was its whole deadline).
func TestServeStopsWithAnUnusedConnection(t *testing.T) {
	var conn net.Conn
	t.Cleanup(func() { // runs after serve's own cleanup, which checks its error
		if conn != nil {
			_ = conn.Close()
		}
	})
	s := startServe(t, t.TempDir(), nil)
	host := strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/")
	var err error
	if conn, err = net.Dial("tcp", host); err != nil {
		t.Fatal(err)
	}
	// The server has accepted it once it answers a request on another.
	if resp, err := http.Get(s.url + "api/pipelines"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
}

func TestServeDataRootFlag(t *testing.T) {
	root := absRepoRoot(t)
	s := startServe(t, t.TempDir(), map[string]string{"DIALOGFARM_TOKEN": "a-token-of-my-own-choosing"}, "--data-root", filepath.Join(root, "examples"))
	if printed := strings.Join(s.lines, "\n"); strings.Contains(printed, "a-token-of-my-own-choosing") || !strings.Contains(printed, "?token=<your token>") {
		t.Fatalf("a chosen token is echoed: %q", s.lines)
	}
	if !strings.Contains(strings.Join(s.lines, "\n"), "data roots (the host paths pipelines may name): "+filepath.Join(root, "examples")) {
		t.Fatalf("roots line: %q", s.lines)
	}
	apply := func(repo string) string {
		body := `{"base_revision":0,"mutations":[{"op":"add_node","node":"profile","operator":"profile","params":{"name":"default"}},` +
			`{"op":"add_node","node":"plan","operator":"plan","params":{"n":2},"inputs":{"profile":"profile"}},` +
			`{"op":"add_node","node":"configs","operator":"configs","params":{"repos":["` + repo + `"]},"inputs":{"plan":"plan"}}]}`
		req, _ := http.NewRequest("POST", s.url+"api/pipelines/p/apply", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer a-token-of-my-own-choosing")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return string(out)
	}
	if out := apply(filepath.Join(root, "cmd")); !strings.Contains(out, "PATH_OUTSIDE_ROOTS") {
		t.Fatalf("a folder outside --data-root: %s", out)
	}
	if out := apply(filepath.Join(root, "examples", "sample-repo")); !strings.Contains(out, `"committed":true`) {
		t.Fatalf("a folder under --data-root: %s", out)
	}
}

// TestServeRefusesPlainHTTPBeyondLoopback: a non-loopback --listen
// without TLS is refused unless --insecure-http says otherwise, which
// warns; a short token is refused.
func TestServeRefusesPlainHTTPBeyondLoopback(t *testing.T) {
	var out, errOut bytes.Buffer
	// Were the check missing, serve would serve until this deadline.
	refuseCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	err := run(refuseCtx, []string{"serve", "--listen", "0.0.0.0:0", "--store", filepath.Join(t.TempDir(), "s")}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--tls-cert") || !strings.Contains(err.Error(), "--insecure-http") {
		t.Fatalf("plain HTTP on 0.0.0.0: %v", err)
	}
	err = run(refuseCtx, []string{"serve", "--token", "short", "--store", filepath.Join(t.TempDir(), "s")}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Fatalf("a short token: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "0.0.0.0:0", "--insecure-http", "--store", filepath.Join(t.TempDir(), "s"), "--runs", t.TempDir()}, pw, &stderr)
		pw.Close()
	}()
	line, _ := bufio.NewReader(pr).ReadString('\n')
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, "dialogfarm serve: open http://127.0.0.1:") || !strings.Contains(stderr.String(), "WARNING: serving 0.0.0.0:0 over plain HTTP") {
		t.Fatalf("--insecure-http: %q, stderr %q", line, stderr.String())
	}
}

// headerTransport adds headers to every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeTLS: with --tls-cert and --tls-key a non-loopback --listen is
// served over HTTPS with no warning, the token still required and the
// cookie Secure.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	s := startServe(t, dir, nil, "--listen", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(s.url, "https://127.0.0.1:") {
		t.Fatalf("url %s", s.url)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := c.Get(s.url + "api/pipelines"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token over TLS: %v %v", resp, err)
	}
	resp, err := c.Get(s.url + "?token=" + s.token)
	if err != nil || resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 1 || !resp.Cookies()[0].Secure {
		t.Fatalf("token URL over TLS: %v %v", resp, err)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}
