package driver

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"testing"
)

// checkNoWebSocketCompression opens a WebSocket to the running editor the
// way the workbench does, offering permessage-deflate as Chromium always
// does, and checks that code-server declines it: on loopback the
// compression only costs CPU at both ends.
func checkNoWebSocketCompression(t *testing.T, ctx context.Context, r *Runner, out string) {
	u, err := url.Parse(r.editor.URL())
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		r.editor.URL()+"/?reconnectionToken=dialogfarm-test&reconnection=false&skipWebSocketFrames=false", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key":        "ZGlhbG9nZmFybS10ZXN0IQ==",
		"Sec-WebSocket-Extensions": "permessage-deflate; client_max_window_bits",
		"Cookie":                   sessionCookie(t, out),
	} {
		req.Header.Set(k, v)
	}
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("WebSocket handshake: %s, want 101 (the check needs an open socket)", resp.Status)
	}
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		t.Errorf("code-server accepted WebSocket extensions %q: the workbench's traffic is compressed", ext)
	}
}
