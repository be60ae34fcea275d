package farm

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// ServerConfig configures an embedded NATS server with JetStream.
type ServerConfig struct {
	// Name is the server's name (unique within a cluster).
	Name string
	// StoreDir is the JetStream file store.
	StoreDir string
	// Listen is host:port for clients; empty means in-process only (no
	// port is opened).
	Listen string
	// Cluster, when set, is host:port of this node's cluster listener and
	// Routes the other nodes' cluster addresses (nats://host:port).
	Cluster     string
	ClusterName string
	Routes      []string
	// TLS, when set, is required of every client (and, with ClientCAs,
	// secures the cluster's routes). A Listen or Cluster address beyond
	// loopback requires it.
	TLS *tls.Config
	// Users are the public user NKeys allowed to connect, each with the
	// least-privilege permissions of its role (see permissions). A server
	// that listens (Listen set) requires them unless InsecureAnonymous.
	Users []User
	// InsecureAnonymous lets clients in without a key, with every right;
	// only on a loopback Listen address.
	InsecureAnonymous bool
}

// Server is a running embedded NATS server.
type Server struct {
	ns *server.Server
	// own is the in-process connection's NKey when the server requires
	// authentication: a coordinator made for this process only, so
	// Connect works on a server that lets only its listed users in.
	own nkeys.KeyPair
}

// StartServer starts an embedded NATS server with JetStream and waits until
// it accepts connections.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("create farm store %s: %w", cfg.StoreDir, err)
	}
	opts := &server.Options{
		ServerName: cfg.Name,
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		NoSigs:     true,
		NoLog:      true,
		Host:       "127.0.0.1",
		Port:       -1,
	}
	if opts.ServerName == "" {
		opts.ServerName = "dialogfarm"
	}
	if cfg.Listen == "" {
		opts.DontListen = true
	} else {
		host, port, err := splitHostPort(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("farm listen address %q: %w", cfg.Listen, err)
		}
		opts.Host, opts.Port = host, port
	}
	if cfg.Cluster != "" {
		host, port, err := splitHostPort(cfg.Cluster)
		if err != nil {
			return nil, fmt.Errorf("farm cluster address %q: %w", cfg.Cluster, err)
		}
		opts.Cluster = server.ClusterOpts{Name: cfg.ClusterName, Host: host, Port: port}
		if opts.Cluster.Name == "" {
			opts.Cluster.Name = "dialogfarm"
		}
		opts.Routes = server.RoutesFromStr(strings.Join(cfg.Routes, ","))
	}
	if cfg.TLS != nil {
		opts.TLSConfig = cfg.TLS
		opts.TLS = true
		opts.TLSVerify = cfg.TLS.ClientAuth == tls.RequireAndVerifyClientCert
		if cfg.Cluster != "" && cfg.TLS.ClientCAs != nil {
			// The routes: each node presents its certificate and
			// verifies the other's against the same CA, both ways.
			rt := cfg.TLS.Clone()
			rt.RootCAs, rt.ClientAuth = cfg.TLS.ClientCAs, tls.RequireAndVerifyClientCert
			opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = rt, 5
		}
	}
	var own nkeys.KeyPair
	if len(cfg.Users) > 0 {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return nil, fmt.Errorf("make the farm server's own NKey: %w", err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("make the farm server's own NKey: %w", err)
		}
		own = kp
		cfg.Users = append(cfg.Users[:len(cfg.Users):len(cfg.Users)], User{Nkey: pub, Role: "coordinator"})
	}
	for i, u := range cfg.Users {
		if err := u.Check(); err != nil {
			return nil, fmt.Errorf("farm user %d: %w", i+1, err)
		}
		perms, _ := permissions(u.Role, u.Nkey)
		opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: u.Nkey, Permissions: perms})
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("start farm server: %w", err)
	}
	ns.Start()
	deadline := 10 * time.Second
	if d, ok := ctx.Deadline(); ok {
		deadline = time.Until(d)
	}
	if !ns.ReadyForConnections(deadline) {
		ns.Shutdown()
		return nil, errors.New("start farm server: not ready for connections in time")
	}
	return &Server{ns: ns, own: own}, nil
}

// Connect opens an in-process client connection (as the server's own
// coordinator when it requires authentication).
func (s *Server) Connect() (*nats.Conn, error) {
	opts := []nats.Option{nats.InProcessServer(s.ns), nats.Name("dialogfarm")}
	if s.own != nil {
		pub, err := s.own.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("connect to the embedded farm server: %w", err)
		}
		opts = append(opts, nats.Nkey(pub, s.own.Sign), nats.CustomInboxPrefix(InboxPrefix(pub)))
	}
	nc, err := nats.Connect(s.ns.ClientURL(), opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to the embedded farm server: %w", err)
	}
	return nc, nil
}

// ClientURL is the address clients on the network use ("" when the server
// listens in-process only).
func (s *Server) ClientURL() string {
	if s.ns.Addr() == nil {
		return ""
	}
	return s.ns.ClientURL()
}

// Shutdown stops the server and waits until it has stopped.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// ClientConfig says how to reach a remote farm.
type ClientConfig struct {
	URL string
	// Creds is a NATS credentials file (JWT + NKey seed); Nkey a file with
	// a user NKey seed. At most one.
	Creds, NkeySeed string
	// CAFile, CertFile, KeyFile configure TLS.
	CAFile, CertFile, KeyFile string
	Name                      string
}

// Dial connects to a remote farm server. A client with a key receives its
// replies under its own inbox prefix (InboxPrefix), the only one a worker
// may subscribe to.
func Dial(ctx context.Context, cfg ClientConfig) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(cfg.Name), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(false)}
	if cfg.Creds != "" && cfg.NkeySeed != "" {
		return nil, errors.New("connect to farm: give a credentials file or an NKey seed file, not both")
	}
	if cfg.Creds != "" || cfg.NkeySeed != "" {
		auth, _, err := clientAuth(cfg.Creds, cfg.NkeySeed)
		if err != nil {
			return nil, fmt.Errorf("connect to farm %s: %w", cfg.URL, err)
		}
		opts = append(opts, auth...)
	}
	if cfg.CAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.CAFile))
	}
	if cfg.CertFile != "" || cfg.KeyFile != "" {
		opts = append(opts, nats.ClientCert(cfg.CertFile, cfg.KeyFile))
	}
	if d, ok := ctx.Deadline(); ok {
		opts = append(opts, nats.Timeout(time.Until(d)))
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to farm %s: %w", cfg.URL, err)
	}
	return nc, nil
}

// JetStream wraps a connection in the JetStream API.
func JetStream(nc *nats.Conn) (jetstream.JetStream, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("open JetStream: %w", err)
	}
	return js, nil
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: %w", p, err)
	}
	if port == 0 {
		port = server.RANDOM_PORT // ":0" is any free port, as with net.Listen (NATS would take 0 as its default)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}
