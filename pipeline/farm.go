package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/driver"
	"dialogfarm/driver/editor"
	"dialogfarm/driver/workbench"
	"dialogfarm/farm"
	"dialogfarm/internal/runfiles"
)

// FarmConfig says where the drive stage's queue lives and how workers
// retry.
type FarmConfig struct {
	// NATS, when its URL is set, is a remote farm (`dialogfarm farm
	// serve` or a NATS cluster with JetStream) that the run enqueues into
	// and collects from. Empty: a NATS server embedded in this process,
	// its store in OUT/farm.
	NATS farm.ClientConfig
	// Queue sizes the streams (on a remote farm: only when this run is the
	// first to set them up).
	Queue farm.QueueConfig
	// Attempts bounds how often a failing dialogue is driven.
	Attempts int
	// Local says this process also drives (cfg.Run.Sessions simulators);
	// false leaves the driving to remote workers.
	Local bool
	// Auto admits each dialogue by the machine's CPU and memory budget
	// (--sessions auto) rather than running every window at once.
	Auto bool
	// Metrics, when set, counts this process's dialogues.
	Metrics *farm.Metrics
	// WatchEvery is how often a run that does not drive (Local false)
	// warns while its jobs wait and no worker reports; 0: never.
	WatchEvery time.Duration
	// RepoCacheMiB bounds a remote worker's repositories (OUT/repos):
	// beyond it, those no window shows go, least recently used first;
	// 0 keeps every one.
	RepoCacheMiB int64
	// ExchangesMiB, when positive, bounds OUT/exchanges.jsonl: past it,
	// the file is moved aside and one older file kept (a standing
	// worker's); 0 keeps every exchange in it (a run's).
	ExchangesMiB int
	// Recipe, when set, is what this process's records depend on beside
	// each config: a run puts it in its jobs, and a worker refuses the
	// jobs of a run whose recipe differs from it.
	Recipe *farm.Recipe
	// Drain, when closed, stops a worker (Work) pulling jobs: it finishes
	// the dialogues in progress and returns.
	Drain <-chan struct{}
	// Limits, when set, are the rpm and tpm limits this process's models
	// take from the farm (pool.Policy.Limits), shared with its other processes:
	// bound to a remote farm once it is open, local until then and on the
	// embedded one (no other process calls from it).
	Limits *farm.Limits
	// IdleExit, when positive, stops a worker (Work) that has had no job
	// for that long (farm.WorkerConfig.IdleExit).
	IdleExit time.Duration
	// Backlog bounds how many of a run's configs wait or are in flight
	// on a remote farm at once (see backlog.go): more are enqueued as
	// outcomes come in. 0 is three per simulator of the farm, at least
	// 32; BacklogAll enqueues them all at once, as a run on the embedded
	// farm does.
	Backlog int
	// PauseAfterFailures pauses a worker (Work) that many dialogues, each
	// of another config, failed on in a row, so that the other workers
	// drive the jobs (see farm.WorkerConfig): 0 is 5 or its simulators,
	// whichever is more; negative, never. A run's own simulators never
	// pause.
	PauseAfterFailures int
}

// DefaultFarmConfig embeds the farm and drives locally, 3 attempts; a
// remote worker keeps 20 GiB of repositories.
func DefaultFarmConfig() FarmConfig {
	return FarmConfig{Queue: farm.DefaultQueueConfig(), Attempts: 3, Local: true, WatchEvery: 30 * time.Second,
		RepoCacheMiB: 20 << 10}
}

// Farm files in the run folder.
const (
	FarmDir      = "farm"
	FarmRunFile  = "farm.json"
	AttemptsFile = "attempts.jsonl"
	DeadFile     = "dead.jsonl"
	// FailuresDir holds the failure artifacts remote workers send back,
	// a folder per config; RepoCacheDir a remote worker's repositories.
	FailuresDir   = "failures"
	RepoCacheDir  = "repos"
	farmLocalName = "local"
)

// openFarm connects to the configured farm (starting the embedded one) and
// returns its queue, the run's name on it, and a closer.
func openFarm(ctx context.Context, cfg FarmConfig, out string) (q *farm.Queue, run string, closer func(), err error) {
	var nc *nats.Conn
	embedded := cfg.NATS.URL == ""
	if embedded {
		// The embedded farm belongs to the run folder's owner: take the
		// folder's lock unless this process already holds it.
		lock, err := driver.LockRunFolder(out)
		var locked *driver.LockedError
		if errors.As(err, &locked) && locked.PID == os.Getpid() {
			err = nil
		}
		if err != nil {
			return nil, "", nil, err
		}
		srv, err := farm.StartServer(ctx, farm.ServerConfig{StoreDir: filepath.Join(out, FarmDir)})
		if err != nil {
			_ = lock.Unlock()
			return nil, "", nil, err
		}
		if nc, err = srv.Connect(); err != nil {
			srv.Shutdown()
			_ = lock.Unlock()
			return nil, "", nil, err
		}
		closer = func() { nc.Close(); srv.Shutdown(); _ = lock.Unlock() }
	} else {
		if nc, err = farm.Dial(ctx, cfg.NATS); err != nil {
			return nil, "", nil, err
		}
		closer = nc.Close
	}
	run, key, err := farmRunState(out, embedded)
	if err != nil {
		closer()
		return nil, "", nil, err
	}
	js, err := farm.JetStream(nc)
	if err == nil {
		q, err = farm.Setup(ctx, js, cfg.Queue)
	}
	if err == nil {
		q.SetRunKey(run, key)
	}
	if err == nil && !embedded && cfg.Limits != nil {
		cfg.Limits.Bind(ctx, q)
	}
	if err == nil && embedded {
		// Only this process works on its embedded farm, and the run
		// folder's lock says no earlier process is alive: jobs it held
		// go back to the queue now, not after the ack wait.
		err = q.Reclaim(ctx)
	}
	if err != nil {
		closer()
		return nil, "", nil, err
	}
	return q, run, closer, nil
}

// FarmRunName is the name a run folder's run has on a shared farm (its
// farm.json), as status --nats RUN reads it.
func FarmRunName(out string) (string, error) {
	path := filepath.Join(out, FarmRunFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s (the run's name on the farm): %w", path, err)
	}
	var st farmRunFile
	if err := json.Unmarshal(data, &st); err != nil || st.Run == "" {
		return "", fmt.Errorf("%s: field run: not the file of a run on a shared farm (%v)", path, err)
	}
	return st.Run, nil
}

// farmRunFile is OUT/farm.json.
type farmRunFile struct {
	// Run is the name on a shared farm ("" until the folder's run uses
	// one).
	Run string `json:"run,omitempty"`
	// Key is the run's sealing key, hex.
	Key string `json:"key,omitempty"`
}

// farmRunState is the run's name on the farm and its sealing key (see
// farm.SetRunKey), made once per run folder and kept in OUT/farm.json
// (mode 0600), so that a resumed run collects its own results: on the
// embedded farm the name is "local", on a shared one a name of its own.
func farmRunState(out string, embedded bool) (string, []byte, error) {
	path := filepath.Join(out, FarmRunFile)
	var st farmRunFile
	data, err := os.ReadFile(path)
	if err == nil {
		if err := json.Unmarshal(data, &st); err != nil {
			return "", nil, fmt.Errorf("%s: not a farm run file: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("read %s: %w", path, err)
	}
	key, err := hex.DecodeString(st.Key)
	if err != nil || (st.Key != "" && len(key) != 32) {
		return "", nil, fmt.Errorf("%s: field key: not 64 hex digits", path)
	}
	changed := false
	if st.Key == "" { // a new run, or one from before runs had keys
		if key, err = farm.NewRunKey(); err != nil {
			return "", nil, err
		}
		st.Key, changed = hex.EncodeToString(key), true
	}
	if !embedded && (st.Run == "" || st.Run == farmLocalName) {
		b := make([]byte, 6)
		if _, err := rand.Read(b); err != nil {
			return "", nil, err
		}
		host, _ := os.Hostname()
		st.Run, changed = fmt.Sprintf("%s-%s", host, hex.EncodeToString(b)), true
	}
	if changed {
		data, _ = json.Marshal(st)
		if err := runfiles.WriteAtomic(path, append(data, '\n')); err != nil {
			return "", nil, fmt.Errorf("write %s: %w", path, err)
		}
	}
	if embedded {
		return farmLocalName, key, nil
	}
	return st.Run, key, nil
}

// driveFarm enqueues the configs not yet recorded ok, drives them with
// local simulators (when cfg.Farm.Local) and collects one record per
// config into OUT/dialogues.jsonl.
func driveFarm(ctx context.Context, cfg DriveConfig, configs []dialog.ChatConfig, srv *capture.Server, followUps workbench.FollowUps, log *zap.Logger) (driver.Summary, error) {
	return farmRun(ctx, cfg, configs, log, func(q *farm.Queue, n int) (*farm.Worker, func(), error) {
		return startWorker(ctx, cfg, q, srv, followUps, n, false, log)
	})
}

// DriveOnRunner drives the configs not yet recorded ok in r's run folder
// (cfg.Run.Out, which must be r's) as driveFarm does, through the farm's
// queue (embedded unless cfg.Farm names a remote one), on the simulator
// slots of r, an editor and browser the caller started and keeps (up to
// cfg.Run.Sessions slots are opened and kept for later calls), and
// collects one record per config. It is for callers that drive several
// batches on one editor and time its start-up apart (editorbench's
// latency runs); `dialogfarm drive` and `run` call Drive.
func DriveOnRunner(ctx context.Context, r *driver.Runner, cfg DriveConfig, configs []dialog.ChatConfig, log *zap.Logger) (driver.Summary, error) {
	cfg.Farm.Local = true
	return farmRun(ctx, cfg, configs, log, func(q *farm.Queue, n int) (*farm.Worker, func(), error) {
		w, err := newWorker(ctx, cfg, q, r, n, false, log)
		return w, func() {}, err
	})
}

// farmRun enqueues the configs not yet recorded ok, drives them with a
// local worker that start makes for n configs (when cfg.Farm.Local) and
// collects one record per config into OUT/dialogues.jsonl.
func farmRun(ctx context.Context, cfg DriveConfig, configs []dialog.ChatConfig, log *zap.Logger, start func(q *farm.Queue, n int) (*farm.Worker, func(), error)) (driver.Summary, error) {
	out := cfg.Run.Out
	records, err := driver.OpenRecordLog(out)
	if err != nil {
		return driver.Summary{}, err
	}
	defer records.Close()
	sum := driver.Summary{Records: records.Path()}
	var todo []dialog.ChatConfig
	for _, c := range configs {
		if records.Done(c.ID) {
			sum.Skipped++
			continue
		}
		todo = append(todo, c)
	}
	if len(todo) == 0 {
		return sum, nil
	}
	fc := cfg.Farm
	q, run, closeFarm, err := openFarm(ctx, fc, out)
	if err != nil {
		return sum, err
	}
	defer closeFarm()
	todo = queueOrder(todo, windows(ctx, cfg, q))
	// On a shared farm, the workers need not see this run folder: the
	// repositories go through the farm's object store, and so do the
	// failure artifacts coming back.
	var opts []farm.EnqueueOption
	if fc.Recipe != nil {
		opts = append(opts, farm.WithRecipe(*fc.Recipe))
	}
	filesDir := ""
	var shipped []string // the repositories sent to the farm
	if fc.NATS.URL != "" {
		shipped = repoDirs(todo)
		refs, err := q.ShipRepos(ctx, shipped, log)
		if err != nil {
			return sum, err
		}
		opts, filesDir = append(opts, farm.WithRepos(refs)), filepath.Join(out, FailuresDir)
	}
	enq, err := q.Enqueuer(ctx, run)
	if err != nil {
		return sum, err
	}
	bl := &backlog{e: enq, q: q, size: fc.Backlog, log: log,
		enqueue: func(ctx context.Context, cs []dialog.ChatConfig) (int, error) {
			return enq.Enqueue(ctx, cs, max(fc.Attempts, 1), records.Done, opts...)
		}}
	if fc.NATS.URL == "" {
		bl.size = BacklogAll
	}
	attempts, err := openExchangeLog(filepath.Join(out, AttemptsFile), 0)
	if err != nil {
		return sum, err
	}
	defer attempts.Close()
	dead, err := openExchangeLog(filepath.Join(out, DeadFile), 0)
	if err != nil {
		return sum, err
	}
	defer dead.Close()

	g, gctx := errgroup.WithContext(ctx)
	wctx, stopWorkers := context.WithCancel(gctx)
	defer stopWorkers()
	collected := make(chan int, 1) // the latest Progress.Done, for the backlog
	g.Go(func() error { return bl.run(gctx, todo, collected) })
	if fc.Local {
		w, stop, err := start(q, len(todo))
		if err != nil {
			return sum, err
		}
		defer stop()
		g.Go(func() error { return w.Run(wctx) })
	} else {
		g.Go(func() error { q.WatchWorkers(wctx, run, fc.WatchEvery, log); return nil })
	}
	g.Go(func() error { q.KeepReposFresh(wctx, shipped, log); return nil })
	var prog farm.Progress
	g.Go(func() error {
		defer stopWorkers()
		var err error
		prog, err = q.Collect(gctx, farm.CollectConfig{
			Run: run, Want: configIDs(todo), Records: records, Metrics: fc.Metrics, FilesDir: filesDir,
			Attempts: func(v any) error { return attempts.Append(v.(farm.Attempt).Dialogue) },
			Dead:     dead.Append,
			Progress: func(p farm.Progress) {
				select { // only the collector sends: room once the last value is taken off
				case <-collected:
				default:
				}
				collected <- p.Done
				if cfg.Run.Progress != nil {
					cfg.Run.Progress(driver.Progress{Done: p.Done, Total: p.Total, OK: p.OK, Failed: p.Failed + p.Dead, Elapsed: p.Elapsed, Last: p.Last})
				}
			},
		}, log)
		return err
	})
	err = g.Wait()
	sum.OK, sum.Failed = prog.OK, prog.Failed+prog.Dead
	if ctx.Err() != nil {
		return sum, ctx.Err()
	}
	return sum, err
}

// startWorker starts the editor and browser, opens up to n simulator
// windows and returns a farm worker driving on them (see newWorker); stop
// ends the editor.
func startWorker(ctx context.Context, cfg DriveConfig, q *farm.Queue, srv *capture.Server, followUps workbench.FollowUps, n int, remote bool, log *zap.Logger) (*farm.Worker, func(), error) {
	r := driver.NewRunner(cfg.Run, srv, followUps, log)
	if err := r.Start(ctx); err != nil {
		return nil, nil, err
	}
	w, err := newWorker(ctx, cfg, q, r, n, remote, log)
	if err != nil {
		r.Stop()
		return nil, nil, err
	}
	return w, r.Stop, nil
}

// newWorker opens up to n simulator slots on the started Runner r and
// returns a farm worker driving on them. A remote worker keeps the
// repositories its jobs name in OUT/repos and sends failure artifacts
// back through the farm.
func newWorker(ctx context.Context, cfg DriveConfig, q *farm.Queue, r *driver.Runner, n int, remote bool, log *zap.Logger) (*farm.Worker, error) {
	slots := min(max(cfg.Run.Sessions, 1), n)
	if err := r.OpenSessions(ctx, slots); err != nil {
		return nil, err
	}
	cfg.Farm.Metrics.WatchEditors(r.PIDs, slots)
	wc := farm.DefaultWorkerConfig()
	wc.Slots, wc.Editors, wc.Recipe, wc.Drain = slots, r.PIDs, cfg.Farm.Recipe, cfg.Farm.Drain
	if remote {
		wc.Repos, wc.SendFiles = farm.NewRepoCache(filepath.Join(cfg.Run.Out, RepoCacheDir), cfg.Farm.RepoCacheMiB<<20, q, log), true
		wc.PauseAfterFailures, wc.IdleExit = cfg.Farm.PauseAfterFailures, cfg.Farm.IdleExit
		if wc.PauseAfterFailures == 0 {
			wc.PauseAfterFailures = max(5, slots)
		}
	}
	if cfg.Farm.Auto {
		wc.Budget = farm.NewBudget(slots)
	}
	return farm.NewWorker(wc, q, RunnerDriver{r}, cfg.Farm.Metrics, log), nil
}

// Work makes this process a worker of a remote farm: it answers the plugin
// with responder, drives cfg.Run.Sessions simulators on jobs of any run,
// and publishes their results, until ctx ends. It needs no folder of the
// coordinator: it fetches the repositories its jobs name from the farm's
// object store into OUT/repos (each once, kept there), and sends failure
// artifacts back the same way. Its run folder keeps the editor's and
// browser's folders, exchanges.jsonl and the artifacts it could not send.
func Work(ctx context.Context, cfg DriveConfig, responder capture.Responder, followUps workbench.FollowUps, log *zap.Logger) error {
	if cfg.Farm.NATS.URL == "" {
		return fmt.Errorf("worker: no farm address (--nats)")
	}
	return withCapture(ctx, cfg, responder, log, func(srv *capture.Server) error {
		nc, err := farm.Dial(ctx, cfg.Farm.NATS)
		if err != nil {
			return err
		}
		defer nc.Close()
		js, err := farm.JetStream(nc)
		if err != nil {
			return err
		}
		q, err := farm.Open(ctx, js)
		if err != nil {
			return err
		}
		if cfg.Farm.Limits != nil {
			cfg.Farm.Limits.Bind(ctx, q)
		}
		w, stop, err := startWorker(ctx, cfg, q, srv, followUps, max(cfg.Run.Sessions, 1), true, log)
		if err != nil {
			return err
		}
		defer stop()
		return w.Run(ctx)
	})
}

// RunnerDriver lets the farm's workers drive on a Runner's windows.
type RunnerDriver struct{ R *driver.Runner }

var _ farm.Driver = RunnerDriver{}

// DriveOne drives c on the slot-th simulator. A plugin that failed to
// activate stops the worker (farm.ErrCannotDrive): no config can pass.
func (d RunnerDriver) DriveOne(ctx context.Context, slot int, c dialog.ChatConfig) (farm.Outcome, error) {
	dl, retry, err := d.R.DriveSlot(ctx, slot, c)
	if _, ok := errors.AsType[*editor.ActivationError](err); ok {
		err = fmt.Errorf("%w: %w", farm.ErrCannotDrive, err)
	}
	return farm.Outcome{Dialogue: dl, Retry: retry}, err
}

// repoDirs are the configs' repository folders, each once.
func repoDirs(cs []dialog.ChatConfig) []string {
	var dirs []string
	seen := map[string]bool{}
	for _, c := range cs {
		if !seen[c.Repo] {
			seen[c.Repo] = true
			dirs = append(dirs, c.Repo)
		}
	}
	return dirs
}

func configIDs(cs []dialog.ChatConfig) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
