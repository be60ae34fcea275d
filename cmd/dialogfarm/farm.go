package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"dialogfarm/configgen"
	"dialogfarm/farm"
	"dialogfarm/pipeline"
)

// addFarmFlags adds the flags that say where the drive queue lives.
func addFarmFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.SetNormalizeFunc(natsAliases)
	f.Int("attempts", 3, "how often a failing dialogue is driven (a timed-out step under load is retried on a fresh window)")
	f.String("nats", "", "address of a shared farm (dialogfarm farm serve or a NATS cluster with JetStream), e.g. tls://farm.example:4222; empty: embedded in this process")
	f.String("nats-creds", "", "credentials for --nats: a file farm serve made (NKey seed) or a NATS credentials file (JWT + NKey seed); --creds says the same")
	f.String("nats-nkey", "", "file holding a NATS user NKey seed for --nats (see dialogfarm farm nkey)")
	f.String("nats-ca", "", "CA certificate that signed the farm server's TLS certificate")
	f.String("nats-cert", "", "client TLS certificate for --nats (when the server requires one)")
	f.String("nats-key", "", "client TLS key for --nats-cert")
	f.String("metrics-addr", "", "serve Prometheus metrics on this address (e.g. 127.0.0.1:9464); empty: none")
}

// natsAliases lets --creds stand for --nats-creds: the name the farm's
// design gives it (`dialogfarm worker --nats URL --creds FILE`).
func natsAliases(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if name == "creds" {
		name = "nats-creds"
	}
	return pflag.NormalizedName(name)
}

// farmConfig reads the flags addFarmFlags added.
func (a *app) farmConfig() (pipeline.FarmConfig, error) {
	fc := pipeline.DefaultFarmConfig()
	fc.Attempts = a.v.GetInt("attempts") // in range (ranges.go)
	fc.Backlog = a.v.GetInt("farm-backlog")
	// Two deliveries beyond the attempts: a worker that dies mid-dialogue
	// costs a delivery without an attempt being recorded.
	fc.Queue.MaxDeliver = fc.Attempts + 2
	fc.NATS = farm.ClientConfig{
		URL: a.v.GetString("nats"), Creds: a.v.GetString("nats-creds"), NkeySeed: a.v.GetString("nats-nkey"),
		CAFile: a.v.GetString("nats-ca"), CertFile: a.v.GetString("nats-cert"), KeyFile: a.v.GetString("nats-key"),
		Name: "dialogfarm",
	}
	if fc.NATS.Creds != "" && fc.NATS.NkeySeed != "" {
		return fc, errors.New("--nats-creds and --nats-nkey: give one")
	}
	if fc.NATS.URL != "" {
		fc.Limits = farm.NewLimits(a.log.Named("limits"))
	}
	return fc, nil
}

// startMetrics serves the drive stage's metrics when --metrics-addr is set.
func (a *app) startMetrics(ctx context.Context, dc *pipeline.DriveConfig) error {
	addr := a.v.GetString("metrics-addr")
	if addr == "" {
		return nil
	}
	dc.Farm.Metrics = farm.NewMetrics(farm.DefaultWorkerConfig().ID)
	return serveMetrics(ctx, addr, dc.Farm.Metrics.Handler(), a.log)
}

// serveMetrics serves h at /metrics on addr until ctx ends; empty addr
// serves nothing.
func serveMetrics(ctx context.Context, addr string, h http.Handler, log *zap.Logger) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics address %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server", zap.Error(err))
		}
	}()
	log.Info("metrics served", zap.String("url", "http://"+ln.Addr().String()+"/metrics"))
	return nil
}

func farmCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "farm", Short: "Hold a shared queue for many worker machines (NATS JetStream)"}
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Run a NATS server with JetStream that runs enqueue into and workers pull from",
		Long: `farm serve runs an embedded NATS server with JetStream for a farm of many
machines. Runs (dialogfarm run|drive --nats URL) enqueue their configs and
collect the results; workers (dialogfarm worker --nats URL) pull jobs and
drive their own editors.

Every client authenticates. On its first start farm serve makes a
coordinator's credentials and --workers workers' (NKey seeds, mode 0600) in
STORE/creds and prints which file goes to which machine and the command to
run there; later starts reuse them (a larger --workers adds files). A worker
may pull jobs, publish its own results and health, and nothing else; a
coordinator enqueues, collects and manages the streams. --users FILE lets
in the NKeys it lists instead. --insecure-anonymous lets anyone in with
every right, on a loopback --listen only. A --listen beyond loopback
requires TLS (--tls-cert, --tls-key; --tls-ca to require client
certificates), and a --cluster beyond loopback also --tls-ca.
--metrics-addr serves the queue (jobs waiting and in flight, outcomes the
farm holds) and every worker's last health report as Prometheus
metrics.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.farmServe(cmd.Context()) },
	}
	f := serve.Flags()
	f.String("listen", "127.0.0.1:4222", "client address (host:port; port 0: any free port, printed when serving)")
	f.String("store", "farm-store", "JetStream file store folder")
	f.String("name", "", "server name (unique in a cluster; default the host name)")
	f.String("cluster", "", "this node's cluster address (host:port) for a cluster of farm servers")
	f.StringSlice("routes", nil, "the other nodes' cluster addresses (nats://host:port)")
	f.String("users", "", "YAML file: a list of {nkey: U..., role: worker|coordinator} to let in; empty: the credentials in STORE/creds (made on the first start)")
	f.Int("workers", 4, "worker credentials to make in STORE/creds, one per worker machine (a later start with more adds files)")
	f.Bool("insecure-anonymous", false, "let clients in without credentials, with every right (loopback --listen only; for a farm on one machine)")
	f.String("tls-cert", "", "server TLS certificate")
	f.String("tls-key", "", "server TLS key")
	f.String("tls-ca", "", "CA of client certificates; when set, clients must present one")
	f.String("metrics-addr", "", "serve the farm's queue and every worker's health as Prometheus metrics on this address (e.g. 127.0.0.1:9465); empty: none")
	nkey := &cobra.Command{
		Use:   "nkey",
		Short: "Make a user NKey: the seed goes to a file (0600), the public key is printed for --users",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return farmNkey(a.v.GetString("seed-file"), a)
		},
	}
	nkey.Flags().String("seed-file", "", "file to write the seed to (required)")
	cmd.AddCommand(serve, nkey, farmForgetCmd(a))
	return cmd
}

func (a *app) farmServe(ctx context.Context) error {
	name := a.v.GetString("name")
	if name == "" {
		name, _ = os.Hostname()
	}
	cfg := farm.ServerConfig{Name: name, StoreDir: a.v.GetString("store"), Listen: a.v.GetString("listen"),
		Cluster: a.v.GetString("cluster"), Routes: a.v.GetStringSlice("routes")}
	if cfg.Listen == "" {
		return errors.New("farm serve: --listen is required")
	}
	var creds *farm.Creds
	switch path := a.v.GetString("users"); {
	case path != "" && a.v.GetBool("insecure-anonymous"):
		return errors.New("farm serve: --users and --insecure-anonymous: give one")
	case path != "":
		users, err := farm.ReadUsers(path)
		if err != nil {
			return err
		}
		cfg.Users = users
	case a.v.GetBool("insecure-anonymous"):
		cfg.InsecureAnonymous = true
	}
	if cert, key := a.v.GetString("tls-cert"), a.v.GetString("tls-key"); cert != "" || key != "" {
		tc, err := serverTLS(cert, key, a.v.GetString("tls-ca"))
		if err != nil {
			return err
		}
		cfg.TLS = tc
	}
	if cfg.Users == nil && !cfg.InsecureAnonymous {
		// Refuse an address that is refused anyway before making files.
		check := cfg
		check.Users = []farm.User{{}}
		if err := check.Check(); err != nil {
			return err
		}
		c, err := farm.EnsureCreds(filepath.Join(cfg.StoreDir, farm.CredsDir), a.v.GetInt("workers"))
		if err != nil {
			return err
		}
		creds, cfg.Users = &c, c.Users
	}
	srv, err := farm.StartServer(ctx, cfg)
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	nc, err := srv.Connect()
	if err != nil {
		return err
	}
	defer nc.Close() // the metrics read the farm through it
	js, err := farm.JetStream(nc)
	if err == nil {
		qc := farm.DefaultQueueConfig()
		if len(cfg.Routes) > 0 {
			qc.Replicas = 3
		}
		_, err = farm.Setup(ctx, js, qc)
	}
	if err != nil {
		return err
	}
	if err := serveMetrics(ctx, a.v.GetString("metrics-addr"), farm.StatusHandler(js), a.log); err != nil {
		return err
	}
	url := advertisedURL(srv.ClientURL())
	fmt.Fprintf(a.stdout, "farm: serving on %s (store %s); stop with Ctrl+C\n", url, cfg.StoreDir)
	switch {
	case creds != nil:
		printHandout(a.stdout, url, *creds, cfg.TLS)
	case cfg.InsecureAnonymous:
		fmt.Fprintln(a.stdout, "farm: WARNING: --insecure-anonymous: any local user can read the jobs (code context), forge results and delete the streams")
	}
	<-ctx.Done()
	return nil
}

// advertisedURL is the URL clients use: a server listening on every
// interface is reached by the host's name.
func advertisedURL(clientURL string) string {
	u, err := neturl.Parse(clientURL)
	if err != nil {
		return clientURL
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		if host, err := os.Hostname(); err == nil {
			u.Host = net.JoinHostPort(host, u.Port())
		}
	}
	return u.String()
}

// printHandout says which credentials file goes to which machine and what
// to run there.
func printHandout(w io.Writer, url string, c farm.Creds, tc *tls.Config) {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	state := "reused from"
	if len(c.Made) > 0 {
		state = fmt.Sprintf("made %d new in", len(c.Made))
	}
	extra := ""
	if tc != nil {
		extra = " --nats-ca CA.pem"
		if tc.ClientCAs != nil {
			extra += " --nats-cert CLIENT.pem --nats-key CLIENT-key.pem"
		}
	}
	fmt.Fprintf(w, "farm: clients need credentials (%s %s); each file is a secret for one machine: copy it there (mode 0600) and give its path\n", state, abs(c.Dir))
	fmt.Fprintf(w, "farm: coordinator (where runs start; also status --nats): %s\n", abs(c.Coordinator))
	fmt.Fprintf(w, "    dialogfarm run --nats %s --creds %s%s --sessions 0 ...\n", url, abs(c.Coordinator), extra)
	for i, f := range c.Workers {
		fmt.Fprintf(w, "farm: worker machine %d: %s\n", i+1, abs(f))
		fmt.Fprintf(w, "    dialogfarm worker --nats %s --creds %s%s\n", url, abs(f), extra)
	}
	fmt.Fprintf(w, "farm: a worker's file lets it pull jobs and publish its own results and health, nothing else; more workers: restart with --workers N; other nodes of a cluster: --users %s\n", abs(c.UsersFile))
	if tc != nil {
		fmt.Fprintln(w, "farm: CA.pem is the CA that signed --tls-cert (clients verify the server with it)")
	}
}

func serverTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load --tls-cert/--tls-key: %w", err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("read --tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate", caFile)
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

func farmNkey(seedFile string, a *app) error {
	if seedFile == "" {
		return errors.New("farm nkey: --seed-file is required")
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return err
	}
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	if err := os.MkdirAll(filepath.Dir(seedFile), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(seedFile, append(seed, '\n'), 0o600); err != nil {
		return fmt.Errorf("write seed: %w", err)
	}
	fmt.Fprintf(a.stdout, "seed written to %s; public key for --users:\n%s\n", seedFile, pub)
	return nil
}

func workerCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Pull jobs from a shared farm and drive them in this machine's editors",
		Long: `worker connects to a farm (dialogfarm farm serve, or a NATS cluster with
JetStream), starts its own code-server and Chromium with --sessions
simulators, and drives the jobs of every run on the farm, publishing each
config's record for the run that enqueued it. It needs no folder of the
machine that started the run: it fetches the repositories its jobs name
from the farm's object store into OUT/repos (each once, kept there for
later jobs and runs; beyond --repo-cache-mib, those no window shows go,
least recently used first) and sends failure artifacts back the same way.
--out keeps the editor's folders, the repositories, exchanges.jsonl (bounded
by --exchanges-mib) and the failure artifacts it could not send back. It
refuses the jobs of a run whose recipe (adapters and plugin versions,
editor settings, responder and pool models, judge, query model) is not
its own, so start it with the run's --config. When the dialogues of
--pause-after-failures configs failed on it in a row, it pulls no job for
a while, leaving them to the other workers. The first SIGINT or SIGTERM
drains it: no more jobs; the dialogues in progress finish (for up to
--drain-timeout, or until a second signal) before it stops. With
--exit-when-idle it also stops, with status 0, once the farm has had no
job for it for that long.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.worker(cmd.Context()) },
	}
	cmd.Flags().String("out", "", "this worker's folder (default out/worker-<host>)")
	cmd.Flags().Int64("repo-cache-mib", pipeline.DefaultFarmConfig().RepoCacheMiB,
		"MiB of repositories kept in OUT/repos; beyond it, those no window shows are removed, least recently used first (0: keep every one)")
	cmd.Flags().Duration("drain-timeout", 5*time.Minute,
		"on SIGINT or SIGTERM, pull no more jobs and finish the dialogues in progress for up to this long before handing them back (a second signal hands them back at once)")
	cmd.Flags().Duration("exit-when-idle", 0,
		"stop (status 0) once no job has come and no dialogue run for this long, for machines started for a batch of work (an autoscaler, spot instances); 0: never")
	cmd.Flags().Int("pause-after-failures", 0,
		"when this many dialogues, each of another config, failed in a row, pull no job for 30 s (doubling while they go on failing, up to 5 min) so that other workers drive them; 0: 5 or --sessions, whichever is more; -1: never")
	cmd.Flags().Int("exchanges-mib", 1024,
		"MiB of OUT/exchanges.jsonl; beyond it, the file is moved aside and one older file kept (the records carry the exchanges to the run folder; 0: keep every one)")
	addDriveFlags(cmd)
	_ = cmd.Flags().MarkHidden("farm-backlog") // a run's, not a worker's
	addQueryModelFlags(cmd)
	addResponderFlags(cmd)
	addToolFlags(cmd)
	return cmd
}

func (a *app) worker(ctx context.Context) error {
	out := a.v.GetString("out")
	if out == "" {
		host, _ := os.Hostname()
		out = filepath.Join("out", "worker-"+host)
	}
	dc, err := a.driveConfig(out)
	if err != nil {
		return err
	}
	if dc.Farm.NATS.URL == "" {
		return errors.New("worker: --nats is required (the farm to pull jobs from)")
	}
	dc.Farm.RepoCacheMiB = a.v.GetInt64("repo-cache-mib")
	dc.Farm.ExchangesMiB = a.v.GetInt("exchanges-mib")
	dc.Farm.PauseAfterFailures = a.v.GetInt("pause-after-failures")
	dc.Farm.IdleExit = a.v.GetDuration("exit-when-idle")
	if err := a.startMetrics(ctx, &dc); err != nil {
		return err
	}
	limits := modelLimits(dc.Farm)
	responder, report, err := a.responder(out, dc.Run, limits)
	if err != nil {
		return err
	}
	defer report(a.stderr)
	fmt.Fprintf(a.stderr, "worker: pulling jobs from %s with %d simulators\n", dc.Farm.NATS.URL, max(dc.Run.Sessions, 1))
	qm, err := a.queryModel(limits)
	if err != nil {
		return err
	}
	work, drain, stop := a.drainOnSignal(ctx, a.v.GetDuration("drain-timeout"))
	defer stop()
	dc.Farm.Drain = drain
	return pipeline.Work(work, dc, responder, configgen.NewFollowUpWriter(qm), a.log)
}

// drainOnSignal lets a worker stop without losing work: once ctx ends (the
// first SIGINT or SIGTERM), drain closes, and the work context ends when
// the grace has passed or at the next signal, which hands the dialogues
// still in progress back to the queue (rather than ending the process at
// once, which would leave its editor running). stop lets go of the
// signals.
func (a *app) drainOnSignal(ctx context.Context, grace time.Duration) (work context.Context, drain <-chan struct{}, stop func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	work, abort := context.WithCancel(context.WithoutCancel(ctx))
	drained := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-work.Done():
			return
		}
		// The signal that ended ctx comes here too (unless ctx ended
		// for a closed output): only a later one stops the drain.
		if strings.HasSuffix(fmt.Sprint(context.Cause(ctx)), "signal received") {
			select {
			case <-sigs:
			case <-time.After(time.Second):
			}
		}
		fmt.Fprintf(a.stderr, "worker: draining: no more jobs; finishing the dialogues in progress for up to %s (signal again to hand them back now)\n", grace)
		close(drained)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-sigs:
		case <-work.Done():
		}
		abort()
	}()
	return work, drained, func() { abort(); signal.Stop(sigs) }
}
