package farm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"dialogfarm/dialog"
)

// Stream, consumer and bucket names.
const (
	JobsStream      = "DFARM_JOBS"
	ResultsStream   = "DFARM_RESULTS"
	DeadStream      = "DFARM_DEAD"
	EventsStream    = "DFARM_EVENTS"
	WorkersConsumer = "workers"
	WorkersBucket   = "dfarm_workers"

	maxDeliveriesAdvisory = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + JobsStream + "." + WorkersConsumer
)

// QueueConfig sizes the streams and the workers' consumer.
type QueueConfig struct {
	// Replicas is 1 on one node, 3 on a cluster.
	Replicas int
	// AckWait is how long a job may go without an in-progress heartbeat
	// before it is redelivered to another worker.
	AckWait time.Duration
	// MaxDeliver bounds deliveries of one job (retries and crashes
	// together); after it the job is dead-lettered.
	MaxDeliver int
	// MaxAckPending bounds jobs in flight over all workers.
	MaxAckPending int
	// MaxJobs bounds queued jobs; enqueueing more waits (backpressure).
	MaxJobs int64
	// RepoMaxAge is how long the repos bucket keeps a repository after
	// it was last sent (0: for ever). A run sends again a repository it
	// drives whose copy is older than a quarter of it, so a run (or a
	// resume) has at least three quarters of it.
	RepoMaxAge time.Duration
}

// DefaultQueueConfig is one node, 60 s ack wait, 5 deliveries,
// repositories kept 30 days.
func DefaultQueueConfig() QueueConfig {
	return QueueConfig{Replicas: 1, AckWait: 60 * time.Second, MaxDeliver: 5, MaxAckPending: 256, MaxJobs: 1_000_000,
		RepoMaxAge: 30 * 24 * time.Hour}
}

// Job is one config to drive.
type Job struct {
	Run    string            `json:"run"`
	Config dialog.ChatConfig `json:"config"`
	// MaxAttempts bounds how often a failing dialogue is driven again.
	MaxAttempts int `json:"max_attempts"`
	// Nonce and Token seal the job to its deliveries: a result must echo
	// them (see seal.go).
	Nonce string `json:"nonce"`
	Token string `json:"token"`
	// Repo, when set, is the config's repository in the farm's repos
	// bucket: a worker with a repository cache drives in its copy of it,
	// not at Config.Repo (the coordinator's path).
	Repo *RepoRef `json:"repo,omitempty"`
	// Recipe, when set, is the run's: a worker whose own differs refuses
	// the job rather than drive it.
	Recipe *Recipe `json:"recipe,omitempty"`
}

// Delivery names the delivery of a job a result or attempt comes from:
// the job's seal, echoed, and where it sat in the jobs stream.
type Delivery struct {
	Nonce string `json:"nonce"`
	Token string `json:"token"`
	// JobSeq is the job's sequence in the jobs stream.
	JobSeq uint64 `json:"job_seq"`
}

// Result is a config's final record: ok, or failed for good.
type Result struct {
	Run      string          `json:"run"`
	Worker   string          `json:"worker"`
	Attempt  int             `json:"attempt"`
	Delivery Delivery        `json:"delivery"`
	Dialogue dialog.Dialogue `json:"dialogue"`
	// Files are the dialogue's artifacts, sent back through the files
	// bucket by a worker that does not share the run folder.
	Files []FileRef `json:"files,omitempty"`
}

// Attempt is a failed dialogue that will be driven again.
type Attempt struct {
	Run      string          `json:"run"`
	Worker   string          `json:"worker"`
	Attempt  int             `json:"attempt"`
	RetryIn  float64         `json:"retry_in_seconds"`
	Delivery Delivery        `json:"delivery"`
	Dialogue dialog.Dialogue `json:"dialogue"`
	Files    []FileRef       `json:"files,omitempty"`
}

// DeadLetter is a config that produced no record within its deliveries.
type DeadLetter struct {
	Run      string `json:"run"`
	ConfigID string `json:"config_id"`
	// Token seals it as the collector's (see seal.go).
	Token      string            `json:"token"`
	Reason     string            `json:"reason"`
	Deliveries int               `json:"deliveries"`
	Worker     string            `json:"worker,omitempty"`
	Config     dialog.ChatConfig `json:"config"`
	At         time.Time         `json:"at"`
}

// Subjects of one run. Results and attempts end in the public NKey of the
// user that published them (Anonymous without one): a worker may publish
// under its own name only.
func jobSubject(run, id string) string  { return "dfarm.jobs." + token(run) + "." + token(id) }
func runJobs(run string) string         { return "dfarm.jobs." + token(run) + ".>" }
func deadSubject(run, id string) string { return "dfarm.dead." + token(run) + "." + token(id) }
func resultSubject(run, id, user string) string {
	return resultPrefix(run) + token(id) + "." + user
}
func attemptSubject(run, id, user string) string {
	return attemptPrefix(run) + token(id) + "." + user
}
func resultPrefix(run string) string  { return "dfarm.results." + token(run) + "." }
func attemptPrefix(run string) string { return "dfarm.events." + token(run) + ".attempt." }

var safeToken = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// token makes an id safe as one subject token: kept as it is when it is
// made of letters, digits, '-' and '_', else a hash of it.
func token(id string) string {
	if safeToken.MatchString(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "h" + hex.EncodeToString(sum[:12])
}

// Queue is the farm's streams on one JetStream.
type Queue struct {
	js                          jetstream.JetStream
	jobs, results, dead, events jetstream.Stream
	workers                     jetstream.Consumer
	cfg                         QueueConfig
	// user is who the connection authenticated as (connUser).
	user string
	// keys caches the runs' sealing keys (run name → []byte).
	keys sync.Map
}

// outcomesMaxAge bounds how long the farm keeps a result or dead letter
// no collector took off.
const outcomesMaxAge = 30 * 24 * time.Hour

// Setup creates or updates the streams, the workers' consumer, the
// workers' health bucket and the shared rate limits' bucket. It retries while JetStream has no meta leader yet
// (API calls are dropped silently until then, e.g. on a cluster starting).
func Setup(ctx context.Context, js jetstream.JetStream, cfg QueueConfig) (*Queue, error) {
	var q *Queue
	err := retry(ctx, js.Conn(), func(ctx context.Context) (err error) {
		q, err = setup(ctx, js, cfg)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("set up the farm streams: %w", err)
	}
	return q, nil
}

func setup(ctx context.Context, js jetstream.JetStream, cfg QueueConfig) (*Queue, error) {
	q := &Queue{js: js, cfg: cfg, user: connUser(js.Conn())}
	r := max(cfg.Replicas, 1)
	var err error
	q.jobs, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: JobsStream, Subjects: []string{"dfarm.jobs.>"}, Retention: jetstream.WorkQueuePolicy,
		Storage: jetstream.FileStorage, Replicas: r, MaxMsgs: cfg.MaxJobs, Discard: jetstream.DiscardNew,
		MaxMsgSize: 1 << 20, Duplicates: 2 * time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", JobsStream, err)
	}
	// Outcomes keep every message on a subject: a subject that held one
	// already must not keep the genuine outcome out, since any client can
	// have the server put a reply on any subject of these streams (NATS
	// does not check reply subjects against permissions). The collector
	// takes the first outcome that is sealed for its config.
	// A collected run's outcomes are taken off (Collect); those of a run
	// never collected go after outcomesMaxAge (resumed later, its
	// unrecorded configs are driven again).
	outcomes := func(name, subjects string) (jetstream.Stream, error) {
		s, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: name, Subjects: []string{subjects}, Storage: jetstream.FileStorage, Replicas: r,
			Discard: jetstream.DiscardNew, MaxMsgSize: 8 << 20, MaxMsgs: -1, MaxMsgsPerSubject: -1,
			MaxAge: outcomesMaxAge,
		})
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", name, err)
		}
		return s, nil
	}
	if q.results, err = outcomes(ResultsStream, "dfarm.results.>"); err != nil {
		return nil, err
	}
	if q.dead, err = outcomes(DeadStream, "dfarm.dead.>"); err != nil {
		return nil, err
	}
	q.events, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: EventsStream, Subjects: []string{"dfarm.events.>", maxDeliveriesAdvisory},
		Storage: jetstream.FileStorage, Replicas: r, MaxMsgSize: 8 << 20, MaxAge: 7 * 24 * time.Hour,
	})
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", EventsStream, err)
	}
	q.workers, err = js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{
		Durable: WorkersConsumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: cfg.AckWait,
		MaxDeliver: cfg.MaxDeliver, MaxAckPending: cfg.MaxAckPending, Replicas: r,
	})
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", WorkersConsumer, err)
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: WorkersBucket, TTL: time.Hour, Storage: jetstream.FileStorage, Replicas: r,
	}); err != nil {
		return nil, fmt.Errorf("bucket %s: %w", WorkersBucket, err)
	}
	// The shared rate limits are booked far more often than they are
	// worth keeping: in memory, a farm server's restart frees them.
	if _, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: LimitsBucket, TTL: limitsTTL, Storage: jetstream.MemoryStorage, Replicas: r,
		// Workers write it: bounded, so that none can fill the server's
		// memory with it. A bound on calls in flight holds an entry
		// of about 45 bytes per process calling the model.
		MaxValueSize: 64 << 10, MaxBytes: 16 << 20,
	}); err != nil {
		return nil, fmt.Errorf("bucket %s: %w", LimitsBucket, err)
	}
	// Repositories are named by their content and kept RepoMaxAge after
	// they were last sent; files sent back are deleted once collected,
	// and after a week at the latest.
	for _, oc := range []jetstream.ObjectStoreConfig{
		{Bucket: ReposBucket, Storage: jetstream.FileStorage, Replicas: r, TTL: cfg.RepoMaxAge},
		{Bucket: FilesBucket, Storage: jetstream.FileStorage, Replicas: r, TTL: 7 * 24 * time.Hour},
	} {
		if _, err := js.CreateOrUpdateObjectStore(ctx, oc); err != nil {
			return nil, fmt.Errorf("object store %s: %w", oc.Bucket, err)
		}
	}
	return q, nil
}

// Reclaim hands every job held by a worker back to the queue at once, by
// recreating the workers' consumer (a work queue keeps unacknowledged jobs;
// a new consumer delivers them from the start). Only the owner of an
// embedded farm may call it, at start, when no worker of an earlier
// process can still be alive; otherwise those jobs wait for AckWait.
func (q *Queue) Reclaim(ctx context.Context) error {
	err := retry(ctx, q.js.Conn(), func(ctx context.Context) error {
		err := q.js.DeleteConsumer(ctx, JobsStream, WorkersConsumer)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("reclaim jobs held by a stopped process: %w", err)
	}
	nq, err := Setup(ctx, q.js, q.cfg)
	if err != nil {
		return err
	}
	q.jobs, q.results, q.dead, q.events, q.workers = nq.jobs, nq.results, nq.dead, nq.events, nq.workers
	return nil
}

// Open binds to streams another process set up (a worker's view): the
// workers' consumer and the health bucket must exist.
func Open(ctx context.Context, js jetstream.JetStream) (*Queue, error) {
	q := &Queue{js: js, user: connUser(js.Conn())}
	err := retry(ctx, js.Conn(), func(ctx context.Context) (err error) {
		q.workers, err = js.Consumer(ctx, JobsStream, WorkersConsumer)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open the farm queue (has a coordinator set it up?): %w", err)
	}
	info := q.workers.CachedInfo()
	q.cfg = QueueConfig{AckWait: info.Config.AckWait, MaxDeliver: info.Config.MaxDeliver}
	return q, nil
}

// retry runs f with short attempts until it succeeds or ctx ends; the farm
// API calls are dropped while a cluster elects its leaders, and each try is
// cheap. A try the server refused for lack of permission ends the retries
// with that refusal (see refusedDuring).
func retry(ctx context.Context, nc *nats.Conn, f func(ctx context.Context) error) error {
	backoff := 50 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := refusedDuring(actx, nc, f)
		cancel()
		if err == nil || !transient(err) {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// ErrRefused is a farm call the server refused to the connection's user:
// its role in `farm serve --users` (or its NATS account) lacks the right.
var ErrRefused = errors.New("the farm server refused this user the right (run or drive with --nats, and status --nats, need role coordinator; a worker needs role worker)")

// refusedDuring runs f and, when it fails while the server reported a
// permissions violation on nc, returns that instead, as ErrRefused: the
// server answers a request it refuses with no reply, only an asynchronous
// error on the connection, so the call itself times out as if the server
// were slow.
func refusedDuring(ctx context.Context, nc *nats.Conn, f func(ctx context.Context) error) error {
	before := nc.LastError()
	err := f(ctx)
	if err == nil {
		return err
	}
	// A violation reported after before was read is a new error value.
	if last := nc.LastError(); errors.Is(last, nats.ErrPermissionViolation) && !errors.Is(last, before) {
		return fmt.Errorf("%w: %w", ErrRefused, last)
	}
	return err
}

// transient errors are worth another try: timeouts and no responders while
// the cluster is not ready, or a stream leader moving.
func transient(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 503
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrTimeout)
}
