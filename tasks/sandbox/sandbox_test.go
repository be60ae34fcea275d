package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newSandbox(t *testing.T, cfg Config) *Sandbox {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode() != "bwrap" {
		t.Fatalf("sandbox mode %q: bubblewrap (make setup installs it) is needed for these tests", s.Mode())
	}
	return s
}

func py(t *testing.T, s *Sandbox, ws, code string) Result {
	t.Helper()
	res, err := s.Run(context.Background(), ws, ws, []string{"/usr/bin/python3", "-c", code})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSandboxDeniesNetwork(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "reached") }))
	defer srv.Close()
	s := newSandbox(t, DefaultConfig())
	ws := t.TempDir()
	code := fmt.Sprintf(`import urllib.request
try:
    print(urllib.request.urlopen(%q, timeout=3).read().decode())
except Exception as e:
    print("blocked:", type(e).__name__)
`, srv.URL)
	res := py(t, s, ws, code)
	if strings.Contains(res.Output, "reached") || !strings.Contains(res.Output, "blocked:") {
		t.Fatalf("the sandbox reached the host's loopback server: %q", res.Output)
	}
	// outside the sandbox the same code does reach it
	out, err := runHost(code)
	if err != nil || !strings.Contains(out, "reached") {
		t.Fatalf("control run outside the sandbox: %q, %v", out, err)
	}
}

func TestSandboxDeniesWritesOutsideWorkspace(t *testing.T) {
	s := newSandbox(t, DefaultConfig())
	ws, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "victim.txt")
	code := fmt.Sprintf(`import os
open("inside.txt", "w").write("ok")
for p in [%q, "/usr/dialogfarm-sandbox-test", os.path.join(os.getcwd(), "..", "escape.txt")]:
    try:
        open(p, "w").write("x")
        print("wrote", p)
    except OSError as e:
        print("denied", p, e.errno)
`, victim)
	res := py(t, s, ws, code)
	if res.ExitCode != 0 || strings.Contains(res.Output, "wrote "+victim) || strings.Contains(res.Output, "wrote /usr") {
		t.Fatalf("exit %d, output:\n%s", res.ExitCode, res.Output)
	}
	// the workspace's parent is the sandbox's private /tmp: a write there
	// may succeed but must not reach the host
	for _, p := range []string{victim, filepath.Join(filepath.Dir(ws), "escape.txt"), "/usr/dialogfarm-sandbox-test"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written on the host", p)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "ok" {
		t.Fatalf("the workspace is not writable: %q, %v", b, err)
	}
}

func TestSandboxKillsRunaways(t *testing.T) {
	ws := t.TempDir()
	t.Run("time", func(t *testing.T) {
		s := newSandbox(t, Config{Timeout: 2 * time.Second})
		res := py(t, s, ws, "while True: pass")
		if !res.TimedOut || res.ExitCode == 0 {
			t.Fatalf("an endless loop was not killed: %+v", res)
		}
	})
	t.Run("memory", func(t *testing.T) {
		s := newSandbox(t, Config{MemoryMB: 100})
		res := py(t, s, ws, "x = bytearray(800 << 20); x[::4096] = b'1' * len(x[::4096]); print('allocated')")
		if res.ExitCode == 0 || strings.Contains(res.Output, "allocated") {
			t.Fatalf("800 MB were allocated under a 100 MB limit: %+v", res)
		}
	})
	t.Run("processes", func(t *testing.T) {
		s := newSandbox(t, Config{MaxProcs: 20})
		if !s.cgroups && os.Geteuid() == 0 {
			t.Skip("no writable cgroups: RLIMIT_NPROC does not bind root")
		}
		res, err := s.Run(context.Background(), ws, ws, []string{"/bin/sh", "-c", "for i in $(seq 60); do sleep 3 & done; wait; echo all-started"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Output, "all-started") && res.ExitCode == 0 {
			t.Fatalf("60 processes started under a limit of 20: %+v", res)
		}
	})
}
