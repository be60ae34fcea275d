package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"dialogfarm/farm"
)

// serveFarm runs `farm serve args...` in this process until the test ends
// and returns its output once it has printed how to hand out the
// credentials (or stopped).
func serveFarm(t *testing.T, args ...string) (out string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var buf lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"farm", "serve"}, args...), &buf, io.Discard) }()
	var err error
	stopped := false
	stop = func() error {
		cancel()
		if !stopped {
			err, stopped = <-done, true
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(buf.String(), "other nodes of a cluster") && !strings.Contains(buf.String(), "WARNING") {
		select {
		case err = <-done:
			stopped = true
			return buf.String(), func() error { return err }
		case <-deadline.C:
			t.Fatalf("farm serve printed no hand-out in 30 s:\n%s", buf.String())
		case <-tick.C:
		}
	}
	return buf.String(), stop
}

// farm serve with no --users makes a coordinator's and the workers'
// credentials on its first start (mode 0600), prints which file goes to
// which machine with the exact worker command, lets a worker in with its
// file and no one without one; a restart reuses the same files.
func TestFarmServeMakesCredentials(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	out, stop := serveFarm(t, "--listen", "127.0.0.1:0", "--store", store, "--workers", "2")
	t.Logf("farm serve:\n%s", out)
	url := regexp.MustCompile(`serving on (nats://127\.0\.0\.1:\d+)`).FindStringSubmatch(out)
	workers := regexp.MustCompile(`(?m)^    dialogfarm worker --nats (\S+) --creds (\S+)$`).FindAllStringSubmatch(out, -1)
	coord := regexp.MustCompile(`(?m)^    dialogfarm run --nats \S+ --creds (\S+) --sessions 0`).FindStringSubmatch(out)
	if url == nil || len(workers) != 2 || coord == nil || !strings.Contains(out, "made 3 new in") {
		t.Fatalf("farm serve's hand-out: url %v, %d worker lines, coordinator %v:\n%s", url, len(workers), coord, out)
	}
	for i, w := range workers {
		if w[1] != url[1] || w[2] != filepath.Join(store, farm.CredsDir, fmt.Sprintf("worker-%d.nk", i+1)) {
			t.Errorf("worker line %d: %q", i+1, w[0])
		}
		info, err := os.Stat(w[2])
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v", w[2], info, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The worker's line works as printed: its file opens the queue.
	nc, err := farm.Dial(ctx, farm.ClientConfig{URL: workers[1][1], Creds: workers[1][2]})
	if err != nil {
		t.Fatalf("worker 2 with its credentials: %v", err)
	}
	js, _ := farm.JetStream(nc)
	if _, err := farm.Open(ctx, js); err != nil {
		t.Errorf("worker 2 opening the queue: %v", err)
	}
	nc.Close()
	if nc, err := farm.Dial(ctx, farm.ClientConfig{URL: url[1]}); err == nil {
		nc.Close()
		t.Error("an anonymous client was let in")
	}
	seed, _ := os.ReadFile(workers[0][2])
	if err := stop(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("farm serve stopped with %v", err)
	}

	// Started again, with its metrics served.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := l.Addr().String()
	l.Close()
	again, _ := serveFarm(t, "--listen", "127.0.0.1:0", "--store", store, "--workers", "2", "--metrics-addr", metricsAddr)
	if !strings.Contains(again, "reused from") {
		t.Errorf("the second start made new credentials:\n%s", again)
	}
	res, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`dialogfarm_farm_jobs{state="waiting"} 0`, `dialogfarm_farm_workers{state="healthy"} 0`} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("farm serve's metrics lack %q:\n%s", want, body)
		}
	}
	if now, _ := os.ReadFile(workers[0][2]); string(now) != string(seed) {
		t.Error("the second start replaced worker 1's file")
	}
}

// farm serve refuses, before making anything, an address beyond loopback
// without TLS and anonymous clients beyond loopback; --insecure-anonymous
// on loopback starts, and says what it allows.
func TestFarmServeRefusesOpenDoors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "is not a loopback address: clients would send jobs and results in clear; give --tls-cert FILE --tls-key FILE"},
		{[]string{"--listen", "0.0.0.0:0", "--insecure-anonymous"}, "--insecure-anonymous on 0.0.0.0:0: anonymous clients are only let in on a loopback address"},
		{[]string{"--listen", "127.0.0.1:0", "--insecure-anonymous"}, "WARNING: --insecure-anonymous"},
	} {
		store := filepath.Join(t.TempDir(), "store")
		out, stop := serveFarm(t, append(tc.args, "--store", store)...)
		err := stop()
		if tc.want == "WARNING: --insecure-anonymous" {
			if !strings.Contains(out, tc.want) || err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("%v: %v\n%s", tc.args, err, out)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
		if _, statErr := os.Stat(filepath.Join(store, farm.CredsDir)); statErr == nil {
			t.Errorf("%v: credentials made for a server that was refused", tc.args)
		}
	}
}

// isolated is a command that runs in a private mount namespace where hide
// is an empty tmpfs: a worker started so cannot see the coordinator's
// folder, as on another machine. Where mount namespaces are not allowed
// (no CAP_SYS_ADMIN, no user namespaces) the test is skipped, saying so.
func isolated(ctx context.Context, t *testing.T, hide, bin string, args ...string) *exec.Cmd {
	t.Helper()
	prefix := unsharePrefix(t)
	script := `mount -t tmpfs -o mode=0700 dialogfarm-hidden "$0" && exec "$@"`
	return exec.CommandContext(ctx, prefix[0], append(append(prefix[1:], "sh", "-c", script, hide, bin), args...)...)
}

// unsharePrefix is how this machine makes a private mount namespace:
// unshare --mount as root, else inside a user namespace.
func unsharePrefix(t *testing.T) []string {
	t.Helper()
	probe := t.TempDir()
	if err := os.WriteFile(filepath.Join(probe, "visible"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range [][]string{
		{"unshare", "--mount", "--propagation", "private"},
		{"unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"},
	} {
		out, err := exec.Command(prefix[0], append(prefix[1:], "sh", "-c", `mount -t tmpfs none "$0" && ls -A "$0"`, probe)...).CombinedOutput()
		if err == nil && len(out) == 0 {
			return prefix
		}
	}
	t.Skip("no private mount namespace on this machine (unshare --mount needs CAP_SYS_ADMIN or user namespaces): the workers would see the coordinator's folder")
	return nil
}
