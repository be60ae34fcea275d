package farm

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA makes a CA and a certificate it signed for 127.0.0.1 (server and
// client use), written as PEM files in dir; it returns the server's TLS
// config (client certificates required when mutual) and the CA file.
func testCA(tb testing.TB, dir string, mutual bool) (*tls.Config, string) {
	tb.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			tb.Fatal(err)
		}
		return k
	}
	caKey, leafKey := key(), key()
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "farm"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			tb.Fatal(err)
		}
		return path
	}
	keyDER, _ := x509.MarshalECPrivateKey(leafKey)
	caFile := write("ca.pem", "CERTIFICATE", caDER)
	cert, err := tls.LoadX509KeyPair(write("cert.pem", "CERTIFICATE", leafDER), write("key.pem", "EC PRIVATE KEY", keyDER))
	if err != nil {
		tb.Fatal(err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if mutual {
		pool := x509.NewCertPool()
		pool.AddCert(ca)
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tc, caFile
}

// A server that would be open on the network does not start: no users
// without --insecure-anonymous, anonymous never beyond loopback, and an
// address beyond loopback (client or cluster) only with TLS. The error
// says what to pass.
func TestServerRefusesOpenDoors(t *testing.T) {
	dir := t.TempDir()
	pub, _ := userKey(t, dir, "w")
	users := []User{{Nkey: pub, Role: "worker"}}
	tc, _ := testCA(t, dir, false)
	mtc, _ := testCA(t, t.TempDir(), true)
	for _, tc := range []struct {
		name string
		cfg  ServerConfig
		want string // "" starts
	}{
		{"loopback, no users", ServerConfig{Listen: "127.0.0.1:-1"}, "no users: give the users (farm serve --users FILE, or no flag to make them) or, on a loopback address only, --insecure-anonymous"},
		{"loopback, anonymous on purpose", ServerConfig{Listen: "127.0.0.1:-1", InsecureAnonymous: true}, ""},
		{"in-process only, no users", ServerConfig{}, ""},
		{"all interfaces, anonymous", ServerConfig{Listen: "0.0.0.0:-1", InsecureAnonymous: true, TLS: tc}, "anonymous clients are only let in on a loopback address"},
		{"empty host, anonymous", ServerConfig{Listen: ":-1", InsecureAnonymous: true, TLS: tc}, "anonymous clients are only let in on a loopback address"},
		{"all interfaces, users, no TLS", ServerConfig{Listen: "0.0.0.0:-1", Users: users}, "is not a loopback address: clients would send jobs and results in clear; give --tls-cert FILE --tls-key FILE"},
		{"all interfaces, users and TLS", ServerConfig{Listen: "0.0.0.0:-1", Users: users, TLS: tc}, ""},
		{"cluster beyond loopback, no client CA", ServerConfig{Listen: "127.0.0.1:-1", Users: users, TLS: tc, Cluster: "0.0.0.0:-1"}, "give --tls-cert FILE --tls-key FILE --tls-ca FILE"},
		{"cluster beyond loopback, mutual TLS", ServerConfig{Listen: "127.0.0.1:-1", Users: users, TLS: mtc, Cluster: "0.0.0.0:-1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.StoreDir = filepath.Join(t.TempDir(), "store")
			srv, err := StartServer(context.Background(), tc.cfg)
			if err == nil {
				srv.Shutdown()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("started; want %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// A worker joins a farm beyond loopback over TLS with its key (the
// credentials farm serve makes, given as --creds); without the CA, or
// without a key, it is not let in.
func TestWorkerOverTLSWithGeneratedCreds(t *testing.T) {
	dir := t.TempDir()
	creds, err := EnsureCreds(filepath.Join(dir, CredsDir), 2)
	if err != nil {
		t.Fatal(err)
	}
	tc, caFile := testCA(t, dir, false)
	srv, err := StartServer(context.Background(), ServerConfig{StoreDir: filepath.Join(dir, "store"), Listen: "0.0.0.0:-1", Users: creds.Users, TLS: tc})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	url := strings.Replace(srv.ClientURL(), "0.0.0.0", "127.0.0.1", 1)
	if !strings.HasPrefix(url, "tls://") {
		t.Errorf("client URL %s, want tls://", url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	coord, err := Dial(ctx, ClientConfig{URL: url, Creds: creds.Coordinator, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	cjs, _ := JetStream(coord)
	if _, err := Setup(ctx, cjs, DefaultQueueConfig()); err != nil {
		t.Fatal(err)
	}
	worker, err := Dial(ctx, ClientConfig{URL: url, Creds: creds.Workers[1], CAFile: caFile})
	if err != nil {
		t.Fatalf("a worker with its credentials over TLS: %v", err)
	}
	defer worker.Close()
	wjs, _ := JetStream(worker)
	if _, err := Open(ctx, wjs); err != nil {
		t.Errorf("the worker opening the queue: %v", err)
	}
	if nc, err := Dial(ctx, ClientConfig{URL: url, CAFile: caFile}); err == nil {
		nc.Close()
		t.Error("an anonymous client was let in")
	}
	if nc, err := Dial(ctx, ClientConfig{URL: url, Creds: creds.Workers[0]}); err == nil {
		nc.Close()
		t.Error("a client that cannot verify the server's certificate connected")
	}
}

// EnsureCreds makes the files once, mode 0600, and later calls reuse them
// (the same keys), adding workers when asked for more.
func TestEnsureCredsReusesTheFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), CredsDir)
	first, err := EnsureCreds(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Made) != 3 || len(first.Users) != 3 || first.Users[0].Role != "coordinator" || first.Users[2].Role != "worker" {
		t.Fatalf("first start: %+v", first)
	}
	for _, f := range append([]string{first.Coordinator, first.UsersFile, dir}, first.Workers...) {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if want := os.FileMode(0o600); info.IsDir() && info.Mode().Perm() != 0o700 || !info.IsDir() && info.Mode().Perm() != want {
			t.Errorf("%s: mode %04o", f, info.Mode().Perm())
		}
	}
	again, err := EnsureCreds(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Made) != 1 || len(again.Users) != 4 {
		t.Fatalf("second start with 3 workers: made %v, %d users", again.Made, len(again.Users))
	}
	for i, u := range first.Users {
		if again.Users[i] != u {
			t.Errorf("user %d changed from %v to %v", i, u, again.Users[i])
		}
	}
	fewer, err := EnsureCreds(dir, 1)
	if err != nil || len(fewer.Workers) != 3 {
		t.Errorf("a start asking for 1 worker: %d workers (%v); the files handed out keep their access", len(fewer.Workers), err)
	}
	users, err := ReadUsers(again.UsersFile)
	if err != nil || len(users) != 4 {
		t.Errorf("users.yaml as --users: %v, %v", users, err)
	}
	if err := os.Chmod(again.Workers[0], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureCreds(dir, 3); err == nil || !strings.Contains(err.Error(), "lets others read it; chmod 600") {
		t.Errorf("a credentials file readable by others: %v", err)
	}
}

// Nodes of a cluster with --tls-ca route to each other over TLS with
// their certificates, verified both ways; a node without a certificate
// signed by the CA gets no route (routes bypass client authentication).
func TestClusterRoutesNeedTheCA(t *testing.T) {
	dir := t.TempDir()
	pub, _ := userKey(t, dir, "w")
	users := []User{{Nkey: pub, Role: "worker"}}
	tc, _ := testCA(t, dir, true)
	ports := []int{freePort(t), freePort(t), freePort(t)}
	start := func(i int, tlsc *tls.Config, route int) *Server {
		t.Helper()
		srv, err := StartServer(context.Background(), ServerConfig{Name: fmt.Sprintf("n%d", i), StoreDir: filepath.Join(dir, fmt.Sprint(i)),
			Listen: "127.0.0.1:-1", Users: users, TLS: tlsc, Cluster: fmt.Sprintf("127.0.0.1:%d", ports[i]),
			Routes: []string{fmt.Sprintf("nats://127.0.0.1:%d", ports[route])}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Shutdown)
		return srv
	}
	a, b := start(0, tc, 1), start(1, tc, 0)
	other, _ := testCA(t, t.TempDir(), true) // a certificate of another CA
	rogue := start(2, other, 0)
	deadline := time.Now().Add(20 * time.Second)
	for a.ns.NumRoutes() == 0 || b.ns.NumRoutes() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the two nodes with the CA's certificates have %d and %d routes", a.ns.NumRoutes(), b.ns.NumRoutes())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The rogue node has tried to route to the first by now (it dials at
	// start, as the second did); give it as long as the pair took again.
	time.Sleep(time.Second)
	if n := rogue.ns.NumRoutes(); n != 0 {
		t.Errorf("a node with another CA's certificate has %d routes", n)
	}
	rz, err := a.ns.Routez(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rz.Routes {
		if r.RemoteName != "n1" {
			t.Errorf("the first node has a route to %q", r.RemoteName)
		}
	}
}
