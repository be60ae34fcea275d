package web

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"dialogfarm/pipeline"
)

var testEnv = pipeline.Env{Endpoints: []string{"judge"}, Plugins: []string{"askplugin"}}

func TestTokenAndCrossOrigin(t *testing.T) {
	log := zaptest.NewLogger(t)
	reg := pipeline.NewRegistry()
	store, err := pipeline.OpenStore(filepath.Join(t.TempDir(), "p"), reg, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	runs := pipeline.NewRuns(t.Context(), t.TempDir(), reg, nil, log)
	ts := httptest.NewServer(New(store, runs, Options{Token: "s3cret"}, log).Handler())
	defer ts.Close()
	do := func(method, path string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(`{"base_revision":0,"mutations":[]}`))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		want               int
	}{
		{"no token", "GET", "/api/pipelines", nil, 401},
		{"no token on MCP", "POST", "/mcp", map[string]string{"Content-Type": "application/json"}, 401},
		{"wrong token", "GET", "/api/pipelines", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"bearer", "GET", "/api/pipelines", map[string]string{"Authorization": "Bearer s3cret"}, 200},
		{"cookie", "GET", "/api/pipelines", map[string]string{"Cookie": "dialogfarm_token=s3cret"}, 200},
		{"query sets cookie", "GET", "/?token=s3cret", nil, 303},
		{"cross-site POST", "POST", "/api/pipelines/x/apply", map[string]string{"Authorization": "Bearer s3cret", "Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, 403},
		{"same-origin POST", "POST", "/api/pipelines/x/apply", map[string]string{"Authorization": "Bearer s3cret", "Sec-Fetch-Site": "same-origin"}, 200},
	}
	for _, c := range cases {
		if got := do(c.method, c.path, c.hdr).StatusCode; got != c.want {
			t.Errorf("%s: %s %s = %d, want %d", c.name, c.method, c.path, got, c.want)
		}
	}
	if IsLoopback("0.0.0.0:8765") || !IsLoopback("127.0.0.1:8765") || !IsLoopback("[::1]:1") || IsLoopback("10.0.0.1:80") {
		t.Error("IsLoopback")
	}
}
