package farm

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// User is one client an authenticated server lets in.
type User struct {
	// Nkey is the user's public NKey (starts with U).
	Nkey string `yaml:"nkey"`
	// Role is "worker" or "coordinator".
	Role string `yaml:"role"`
}

// Check says what is wrong with u, naming the field.
func (u User) Check() error {
	if !nkeys.IsValidPublicUserKey(u.Nkey) {
		return fmt.Errorf("field nkey: %q is not a public user NKey (U...)", u.Nkey)
	}
	if _, err := permissions(u.Role, u.Nkey); err != nil {
		return fmt.Errorf("field role: %w", err)
	}
	return nil
}

// Anonymous is the identity of a client that connected without a key (the
// embedded farm's in-process clients, or a farm served with
// --insecure-anonymous): its results and health go under this name.
const Anonymous = "anonymous"

// InboxPrefix is the prefix of user's reply subjects: every client with a
// key uses its own (nats.CustomInboxPrefix), and a worker may subscribe to
// its own only, so no worker receives another's jobs or replies.
func InboxPrefix(user string) string { return "_INBOX_" + user }

// connUser is the identity of the user nc connected as: its public NKey,
// which Dial and Connect put in the connection's inbox prefix, or
// Anonymous.
func connUser(nc *nats.Conn) string {
	if u, ok := strings.CutPrefix(nc.Opts.InboxPrefix, "_INBOX_"); ok && u != "" {
		return u
	}
	return Anonymous
}

// permissions are least-privilege rights per role for the user whose public
// NKey is user.
//
// A worker may pull jobs and settle (ack, nak, heartbeat) the deliveries
// of the workers' consumer, publish results and retried attempts under its
// own name only (dfarm.results.<run>.<config>.<user>), write its own health
// entries ($KV.dfarm_workers.<user>.>), book model calls under the shared
// rate limits (Limits), read repositories, write files back (read none),
// and receive replies on its own inbox prefix only. It
// cannot enqueue, read results, files or other workers' replies,
// dead-letter, read the runs' keys or delete anything.
//
// A coordinator enqueues, collects and manages the streams.
func permissions(role, user string) (*server.Permissions, error) {
	switch role {
	case "worker":
		return &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{
				"$JS.API.CONSUMER.MSG.NEXT." + JobsStream + "." + WorkersConsumer,
				"$JS.API.CONSUMER.INFO." + JobsStream + "." + WorkersConsumer,
				"$JS.ACK." + JobsStream + "." + WorkersConsumer + ".>",
				"dfarm.results.*.*." + user,
				"dfarm.events.*.attempt.*." + user,
				// Its health entries, written by publishing: no reading of
				// the bucket, where it would learn others' keys.
				"$KV." + WorkersBucket + "." + user + ".>",
				// Book model calls under the shared rate limits (Limits):
				// read and compare-and-set any limit of the bucket.
				"$JS.API.STREAM.INFO.KV_" + LimitsBucket,
				"$JS.API.DIRECT.GET.KV_" + LimitsBucket + ".>",
				"$KV." + LimitsBucket + ".>",
				// Read repositories: the bucket's info, an object's meta,
				// an ordered consumer on its chunks.
				"$JS.API.STREAM.INFO.OBJ_" + ReposBucket,
				"$JS.API.DIRECT.GET.OBJ_" + ReposBucket + ".>",
				"$JS.API.CONSUMER.CREATE.OBJ_" + ReposBucket + ".>",
				"$JS.API.CONSUMER.DELETE.OBJ_" + ReposBucket + ".>",
				"$JS.FC.OBJ_" + ReposBucket + ".>",
				// Write files back (chunks and meta), read none.
				"$O." + FilesBucket + ".C.>",
				"$O." + FilesBucket + ".M.>",
			}},
			Subscribe: &server.SubjectPermission{Allow: []string{InboxPrefix(user) + ".>"}},
		}, nil
	case "coordinator":
		return &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{"$JS.API.>", "$JS.ACK.>", "$JS.FC.>", "dfarm.>", "$KV.>", "$O.>"}},
			// _INBOX.> too, for operators' tools (the nats CLI) with a
			// coordinator's key.
			Subscribe: &server.SubjectPermission{Allow: []string{InboxPrefix(user) + ".>", "_INBOX.>", "dfarm.>", "$KV.>"}},
		}, nil
	}
	return nil, fmt.Errorf("%q: want worker or coordinator", role)
}

// clientAuth returns the options that authenticate with a NATS
// credentials file (JWT and NKey seed) or an NKey seed file, and the
// user's public NKey. A file given as creds that holds a seed only (as
// `farm serve` makes them) is taken as an NKey seed file.
func clientAuth(creds, seedFile string) ([]nats.Option, string, error) {
	path, what := creds, "credentials"
	if seedFile != "" {
		path, what = seedFile, "NKey seed"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("read %s file: %w", what, err)
	}
	defer clear(data)
	kp, err := nkeys.ParseDecoratedUserNKey(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s file %s: no user NKey seed (SU...): %w", what, path, err)
	}
	pub, err := kp.PublicKey()
	kp.Wipe()
	if err != nil {
		return nil, "", fmt.Errorf("%s file %s: %w", what, path, err)
	}
	var auth nats.Option
	if seedFile == "" && bytes.Contains(data, []byte("NATS USER JWT")) {
		auth = nats.UserCredentials(path)
	} else if auth, err = nats.NkeyOptionFromSeed(path); err != nil {
		return nil, "", fmt.Errorf("%s file %s: %w", what, path, err)
	}
	return []nats.Option{auth, nats.CustomInboxPrefix(InboxPrefix(pub))}, pub, nil
}

// loopback says whether host (of a listen address) is reachable from this
// machine only. An empty host (all interfaces) is not.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Check refuses a server that would be open on the network: clients are
// authenticated unless InsecureAnonymous says otherwise, and never
// anonymous beyond loopback; a client or cluster address beyond loopback
// needs TLS (and a cluster, client certificates: routes are not otherwise
// authenticated).
func (cfg ServerConfig) Check() error {
	var errs []error
	if cfg.Listen != "" {
		host, _, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			return fmt.Errorf("farm listen address %q: %w", cfg.Listen, err)
		}
		switch {
		case len(cfg.Users) == 0 && !cfg.InsecureAnonymous:
			errs = append(errs, fmt.Errorf("farm listen address %s: no users: give the users (farm serve --users FILE, or no flag to make them) or, on a loopback address only, --insecure-anonymous", cfg.Listen))
		case len(cfg.Users) > 0 && cfg.InsecureAnonymous:
			errs = append(errs, errors.New("farm users and --insecure-anonymous: give one"))
		case cfg.InsecureAnonymous && !loopback(host):
			errs = append(errs, fmt.Errorf("--insecure-anonymous on %s: anonymous clients are only let in on a loopback address (127.0.0.1, ::1, localhost); drop the flag to use the farm's credentials", cfg.Listen))
		}
		if !loopback(host) && cfg.TLS == nil {
			errs = append(errs, fmt.Errorf("farm listen address %s is not a loopback address: clients would send jobs and results in clear; give --tls-cert FILE --tls-key FILE (and --tls-ca FILE to require client certificates), or listen on 127.0.0.1", cfg.Listen))
		}
	}
	if cfg.Cluster != "" {
		host, _, err := net.SplitHostPort(cfg.Cluster)
		if err != nil {
			return fmt.Errorf("farm cluster address %q: %w", cfg.Cluster, err)
		}
		if !loopback(host) && (cfg.TLS == nil || cfg.TLS.ClientCAs == nil) {
			errs = append(errs, fmt.Errorf("farm cluster address %s is not a loopback address: other nodes must prove who they are; give --tls-cert FILE --tls-key FILE --tls-ca FILE (the nodes' certificates, signed by that CA, are used for the routes too), or use 127.0.0.1", cfg.Cluster))
		}
	}
	return errors.Join(errs...)
}
