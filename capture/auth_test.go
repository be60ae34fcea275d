package capture

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// Every request must carry the run secret; without it nothing is answered,
// recorded or logged in a way that shows a key.
func TestRejectsRequestsWithoutTheRunSecret(t *testing.T) {
	var calls atomic.Int32
	r := ResponderFunc(func(context.Context, Request) (Answer, error) {
		calls.Add(1)
		return Answer{Text: "answered"}, nil
	})
	sink := &memSink{}
	s, logs := startServer(t, r, sink)
	root := "http://" + s.Addr()
	secret := s.Secret()
	if len(secret) < 40 || strings.Contains(root, secret) {
		t.Fatalf("secret %q (root %s)", secret, root)
	}
	const guess = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRST"
	body := `{"model":"m","messages":[{"role":"user","content":"x"}]}`
	ctJSON := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name   string
		url    string
		header map[string]string
	}{
		{"no secret, session in path", root + "/s/a/v1/chat/completions", ctJSON},
		{"no secret, session key", root + "/v1/chat/completions", map[string]string{"Authorization": "Bearer session-a"}},
		{"wrong secret in path", root + "/" + guess + "/s/a/v1/chat/completions", ctJSON},
		{"secret with one character changed", root + "/" + secret[:len(secret)-1] + "x/s/a/v1/chat/completions", ctJSON},
		{"secret as a later path segment", root + "/s/a/" + secret + "/v1/chat/completions", ctJSON},
		{"wrong bearer key", root + "/s/a/v1/chat/completions", map[string]string{"Authorization": "Bearer " + guess}},
		{"secret as a basic password", root + "/s/a/v1/chat/completions", map[string]string{"Authorization": "Basic " + secret}},
		// What a web page in any browser on this machine can send without
		// a CORS preflight.
		{"cross-origin text/plain POST", root + "/s/a/v1/chat/completions",
			map[string]string{"Content-Type": "text/plain;charset=UTF-8", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}},
		{"unknown route", root + "/nothing/here", ctJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, header, raw := post(t, tt.url, body, tt.header)
			if status != http.StatusUnauthorized {
				t.Fatalf("status = %d, want 401; body %s", status, raw)
			}
			var e errorBody
			if err := jsonUnmarshalStrict(raw, &e); err != nil || e.Error.Code == nil || *e.Error.Code != "invalid_api_key" {
				t.Errorf("error body %s (%v)", raw, err)
			}
			if header.Get("WWW-Authenticate") == "" {
				t.Error("no WWW-Authenticate header")
			}
		})
	}
	resp, err := http.Get(root + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/models without the secret: %d", resp.StatusCode)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the responder was called %d times", n)
	}
	if got := sink.exchanges(); len(got) != 0 || len(s.Exchanges("a")) != 0 {
		t.Errorf("%d exchanges recorded", len(got))
	}

	// The same requests with the secret are answered: in the path, and as
	// the bearer key.
	for _, c := range []struct {
		url    string
		header map[string]string
	}{
		{s.BaseURL("a") + "/chat/completions", ctJSON},
		{root + "/s/a/v1/chat/completions", map[string]string{"Authorization": "Bearer " + secret}},
		{s.URL() + "/v1/chat/completions", map[string]string{"Authorization": "Bearer session-a"}},
	} {
		if status, _, raw := post(t, c.url, body, c.header); status != http.StatusOK || !strings.Contains(string(raw), "answered") {
			t.Errorf("with the secret: %d %s", status, raw)
		}
	}
	if n := len(s.Exchanges("a")); n != 3 {
		t.Errorf("%d exchanges of session a, want 3", n)
	}
	if logsMention(logs, secret) || logsMention(logs, guess) {
		t.Error("the secret or a guess at it was logged")
	}
}

func TestNewSecret(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b || len(a) < 52 || strings.Trim(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
		t.Errorf("secrets %q, %q", a, b)
	}
	if err := CheckSession(a); err != nil {
		t.Errorf("a secret is not path-safe: %v", err)
	}
}

func jsonUnmarshalStrict(raw []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
