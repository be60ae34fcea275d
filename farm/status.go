package farm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"dialogfarm/internal/procstat"
)

// Health is what a worker last said about itself.
type Health struct {
	Worker string `json:"worker"`
	// User is the public NKey the worker authenticated as: its entry's
	// key is <user>.<worker>.<random>, and a worker may write under its
	// own user only. Status fills it from the key.
	User    string    `json:"user,omitempty"`
	Host    string    `json:"host"`
	Slots   int       `json:"slots"`
	Busy    int       `json:"busy"`
	Done    int       `json:"done"`
	Failed  int       `json:"failed"`
	Retried int       `json:"retried"`
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
	// EditorCores is the CPU the worker's editor (its code-server and
	// Chromium) used between the worker's last two reports, in cores;
	// EditorRSS is their resident memory, in bytes. Both are 0 for a
	// worker with no editor to report on.
	EditorCores float64 `json:"editor_cores,omitempty"`
	EditorRSS   int64   `json:"editor_rss_bytes,omitempty"`
	// Draining says the worker pulls no more jobs and stops once its
	// dialogues in progress are done.
	Draining bool `json:"draining,omitempty"`
	// Refused counts the jobs the worker refused, its recipe differing
	// from their run's; Refusing says the last run it refused and why,
	// at RefusedAt.
	Refused   int       `json:"refused,omitempty"`
	Refusing  string    `json:"refusing,omitempty"`
	RefusedAt time.Time `json:"refused_at,omitzero"`
	// FailedInARow counts the configs whose dialogues failed on this
	// worker since one last passed; Failing is the last failure's step
	// and error. PausedUntil, while ahead, says the worker pulls no job
	// until then, as too many failed in a row.
	FailedInARow int       `json:"failed_in_a_row,omitempty"`
	Failing      string    `json:"failing,omitempty"`
	PausedUntil  time.Time `json:"paused_until,omitzero"`
}

// Paused says whether the worker's last report had it paused at now for
// its failures.
func (h Health) Paused(now time.Time) bool { return h.PausedUntil.After(now) }

// healthEvery is how often a worker refreshes its health entry.
const healthEvery = 5 * time.Second

// reportHealth writes the worker's health into the bucket until ctx ends,
// then marks it stopped by deleting the entry.
//
// The entry's key ends with a random part made at each start (see
// healthKey): the server can be made to put a reply on any subject a
// client names (NATS checks no reply subject against permissions), so
// another worker that knew the key could have the server overwrite the
// entry. A worker writes the entry by publishing on its subject and may
// not read the bucket's subjects, so no other worker learns the key.
func (w *Worker) reportHealth(ctx context.Context) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		w.log.Warn("make the worker's health key", zap.Error(err))
		return
	}
	subject := "$KV." + WorkersBucket + "." + healthKey(w.q.user, w.cfg.ID, hex.EncodeToString(b))
	usage := w.editorUsage()
	put := func(ctx context.Context) {
		w.mu.Lock()
		h := w.health
		w.mu.Unlock()
		h.Updated = time.Now().UTC()
		h.EditorCores, h.EditorRSS = usage(h.Updated)
		data, _ := json.Marshal(h)
		if _, err := w.q.js.Publish(ctx, subject, data); err != nil {
			w.log.Debug("put worker health", zap.Error(err))
		}
	}
	put(ctx)
	every(ctx, healthEvery, func(time.Time) { put(ctx) })
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	del := nats.NewMsg(subject)
	del.Header.Set(kvOperation, kvDelete)
	_, _ = w.q.js.PublishMsg(dctx, del)
}

// The header and value with which a key-value entry is deleted (as
// jetstream.KeyValue.Delete writes it).
const (
	kvOperation = "KV-Operation"
	kvDelete    = "DEL"
)

// healthKey is the key of a worker's health entry: under its user (the
// only keys it may write), its name, and a random part of that start of
// the worker that only the worker and the coordinators (who read the
// bucket) know.
func healthKey(user, worker, secret string) string { return user + "." + token(worker) + "." + secret }

// editorUsage returns what reads the worker's editor: the CPU it used since
// the previous reading, in cores (0 at the first), and its resident memory.
func (w *Worker) editorUsage() func(now time.Time) (cores float64, rss int64) {
	var last int64
	var at time.Time
	return func(now time.Time) (float64, int64) {
		if w.cfg.Editors == nil {
			return 0, 0
		}
		editors, browser := w.cfg.Editors()
		ticks, rss := procstat.Usage(procstat.Read(), editors, browser)
		var cores float64
		if !at.IsZero() && ticks > last {
			cores = float64(ticks-last) / procstat.ClockTicks / now.Sub(at).Seconds()
		}
		last, at = ticks, now
		return cores, rss
	}
}

// Status is the state of the farm's queue and workers.
type Status struct {
	Queued    uint64   `json:"queued"`
	InFlight  int      `json:"in_flight"`
	Results   uint64   `json:"results"`
	Dead      uint64   `json:"dead"`
	Redeliver int      `json:"redelivered"`
	Workers   []Health `json:"workers"`
	// Runs are the runs the farm holds jobs or outcomes of, most jobs
	// first (the whole farm's status only).
	Runs []RunStatus `json:"runs,omitempty"`
	// Limits are the shared rate limits its processes' models call under
	// (the whole farm's status only).
	Limits []LimitStatus `json:"limits,omitempty"`
	// Slots are the bounds on calls in flight to a model across the farm
	// (farm_max_concurrency; the whole farm's status only).
	Slots []SlotStatus `json:"slots,omitempty"`
}

// RunStatus is what the farm holds of one run: its configs whose jobs
// wait or are in flight, and those whose result or dead letter it has
// not collected yet (a run collects its outcomes as they come and takes
// them off the farm when it has them all).
type RunStatus struct {
	Run     string `json:"run"`
	Jobs    uint64 `json:"jobs"`
	Results uint64 `json:"results"`
	Dead    uint64 `json:"dead"`
	// Late says the run has no job on the farm and its collector is gone
	// (it collected the run, farm forget took the run off, or it stopped
	// a week ago): its outcomes came after (a redelivered job's second
	// result, a dialogue that was in progress), and nobody collects them
	// unless the run starts again (the whole farm's status only).
	Late bool `json:"late,omitempty"`
}

// ReadStatus reads the queue's counters and the workers' health; with run
// set, results and dead letters count that run only. A read the server
// refuses to the user ends with ErrRefused.
func ReadStatus(ctx context.Context, js jetstream.JetStream, run string) (Status, error) {
	var st Status
	err := retry(ctx, js.Conn(), func(ctx context.Context) (err error) {
		st, err = readStatus(ctx, js, run)
		if err == nil && run == "" {
			st.Limits, st.Slots, err = readLimits(ctx, js, time.Now())
		}
		return err
	})
	return st, err
}

func readStatus(ctx context.Context, js jetstream.JetStream, run string) (Status, error) {
	var st Status
	runs := map[string]*RunStatus{}
	perRun := func(name string) *RunStatus {
		if runs[name] == nil {
			runs[name] = &RunStatus{Run: name}
		}
		return runs[name]
	}
	count := func(stream, prefix string, tally func(*RunStatus) *uint64) (uint64, error) {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			return 0, fmt.Errorf("stream %s: %w", stream, err)
		}
		filter := prefix + ">"
		if run != "" {
			filter = prefix + token(run) + ".>"
		}
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
		if err != nil {
			return 0, err
		}
		// Configs, not messages: a config's results (one per worker it
		// was delivered to) count once.
		// Subjects are dfarm.<kind>.<run>.<config>[.<user>].
		configs := map[string]bool{}
		for subj := range info.State.Subjects {
			if t := strings.SplitN(subj, ".", 5); len(t) >= 4 {
				key := strings.Join(t[:4], ".")
				if !configs[key] && run == "" {
					(*tally(perRun(t[2])))++
				}
				configs[key] = true
			}
		}
		return uint64(len(configs)), nil
	}
	var err error
	if st.Queued, err = count(JobsStream, "dfarm.jobs.", func(r *RunStatus) *uint64 { return &r.Jobs }); err != nil {
		return st, err
	}
	if st.Results, err = count(ResultsStream, "dfarm.results.", func(r *RunStatus) *uint64 { return &r.Results }); err != nil {
		return st, err
	}
	if st.Dead, err = count(DeadStream, "dfarm.dead.", func(r *RunStatus) *uint64 { return &r.Dead }); err != nil {
		return st, err
	}
	for _, r := range runs {
		if run == "" && r.Jobs == 0 && r.Results+r.Dead > 0 {
			src := collectSources(r.Run)[0]
			_, err := js.Consumer(ctx, src.stream, src.consumer)
			switch {
			case errors.Is(err, jetstream.ErrConsumerNotFound):
				r.Late = true
			case err != nil:
				return st, fmt.Errorf("the collector of run %s: %w", r.Run, err)
			}
		}
		st.Runs = append(st.Runs, *r)
	}
	sort.Slice(st.Runs, func(i, j int) bool {
		a, b := st.Runs[i], st.Runs[j]
		if a.Jobs != b.Jobs {
			return a.Jobs > b.Jobs
		}
		return a.Run < b.Run
	})
	if c, err := js.Consumer(ctx, JobsStream, WorkersConsumer); err == nil {
		if info, err := c.Info(ctx); err == nil {
			st.InFlight, st.Redeliver = info.NumAckPending, info.NumRedelivered
		}
	}
	kv, err := js.KeyValue(ctx, WorkersBucket)
	if err != nil {
		return st, fmt.Errorf("bucket %s: %w", WorkersBucket, err)
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return st, fmt.Errorf("list workers: %w", err)
	}
	// The newest entry per user and worker: a restarted worker writes a
	// key of its own, and the entry of the earlier start ages out.
	newest := map[[2]string]Health{}
	for k := range keys.Keys() {
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return st, fmt.Errorf("worker %s: %w", k, err)
		}
		var h Health
		if json.Unmarshal(e.Value(), &h) != nil {
			continue
		}
		// An entry under one user that names another worker's key is
		// not that worker's.
		parts := strings.SplitN(k, ".", 3)
		if len(parts) != 3 || k != healthKey(parts[0], h.Worker, parts[2]) {
			continue
		}
		h.User = parts[0]
		id := [2]string{h.User, h.Worker}
		if old, ok := newest[id]; !ok || h.Updated.After(old.Updated) {
			newest[id] = h
		}
	}
	for _, h := range newest {
		st.Workers = append(st.Workers, h)
	}
	sort.Slice(st.Workers, func(i, j int) bool {
		a, b := st.Workers[i], st.Workers[j]
		return a.Worker < b.Worker || a.Worker == b.Worker && a.User < b.User
	})
	return st, nil
}

// Simulators is how many simulators the workers that reported their
// health in the last three reporting periods drive; 0 when none did or
// the status could not be read within a few seconds.
func (q *Queue) Simulators(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := readStatus(ctx, q.js, "")
	if err != nil {
		return 0
	}
	n := 0
	for _, h := range st.Workers {
		if time.Since(h.Updated) <= 3*healthEvery {
			n += h.Slots
		}
	}
	return n
}

// Text renders the status for a terminal.
func (st Status) Text(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "queue: %d queued, %d in flight, %d redelivered; %d results, %d dead letters\n",
		st.Queued, st.InFlight, st.Redeliver, st.Results, st.Dead)
	for _, r := range st.Runs {
		outcomes := "not collected yet"
		if r.Late {
			outcomes = "came after it was collected or forgotten (kept 30 days: farm forget takes them off, run in its folder again takes those it lacks)"
		}
		fmt.Fprintf(&b, "run %s: %d jobs waiting or in flight; %d results and %d dead letters %s\n", r.Run, r.Jobs, r.Results, r.Dead, outcomes)
	}
	for _, l := range st.Limits {
		fmt.Fprintf(&b, "rate limit of model %s: %d %s a minute across the farm, %d at once; %d taken now",
			l.Model, l.PerMinute, l.Unit, l.Burst, l.Taken)
		if l.Wait > 0 {
			fmt.Fprintf(&b, "; a call now waits %s", l.Wait.Round(100*time.Millisecond))
		}
		b.WriteByte('\n')
	}
	for _, sl := range st.Slots {
		fmt.Fprintf(&b, "calls in flight to model %s: %d of at most %d across the farm, from %d processes\n",
			sl.Model, sl.InFlight, sl.Max, sl.Processes)
	}
	if len(st.Workers) == 0 {
		b.WriteString("workers: none reporting\n")
	}
	for _, h := range st.Workers {
		state := "healthy"
		if h.Paused(now) {
			state = fmt.Sprintf("paused for %s more after %d configs failed in a row", h.PausedUntil.Sub(now).Round(time.Second), h.FailedInARow)
		}
		if h.Draining {
			state = "draining"
		}
		if age := now.Sub(h.Updated); age > 3*healthEvery {
			state = fmt.Sprintf("silent for %s", age.Round(time.Second))
		}
		fmt.Fprintf(&b, "worker %s on %s: %s, %d/%d simulators busy, %d ok, %d failed, %d retried, up %s",
			h.Worker, h.Host, state, h.Busy, h.Slots, h.Done, h.Failed, h.Retried, now.Sub(h.Started).Round(time.Second))
		if h.EditorRSS > 0 {
			fmt.Fprintf(&b, "; editor %.2f cores, %d MiB", h.EditorCores, h.EditorRSS>>20)
		}
		if h.FailedInARow > 0 {
			fmt.Fprintf(&b, "; %d failed in a row, the last at %s", h.FailedInARow, h.Failing)
		}
		if h.Refused > 0 {
			fmt.Fprintf(&b, "; refused %d jobs, the last %s ago, of %s", h.Refused, now.Sub(h.RefusedAt).Round(time.Second), h.Refusing)
		}
		// The key it authenticated with tells apart workers that give
		// the same name (a worker names itself; its key is the server's).
		if len(h.User) > 8 && h.User != Anonymous {
			fmt.Fprintf(&b, "; key %s…", h.User[:8])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// idleJobs is how many of run's jobs wait while no worker has reported its
// health in the last three reporting periods (0 while one has).
func (q *Queue) idleJobs(ctx context.Context, run string, now time.Time) (uint64, error) {
	st, err := ReadStatus(ctx, q.js, run)
	if err != nil {
		return 0, err
	}
	for _, h := range st.Workers {
		if now.Sub(h.Updated) < 3*healthEvery {
			return 0, nil
		}
	}
	return st.Queued, nil
}

// WatchWorkers warns through log, every period until ctx ends, while jobs of
// run wait and no worker reports: a run that leaves the driving to remote
// workers (run --nats --sessions 0) would otherwise wait in silence. A
// period of 0 watches nothing.
func (q *Queue) WatchWorkers(ctx context.Context, run string, period time.Duration, log *zap.Logger) {
	if period <= 0 {
		return
	}
	every(ctx, period, func(now time.Time) {
		n, err := q.idleJobs(ctx, run, now)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("read the farm's workers", zap.String("run", run), zap.Error(err))
		case n > 0:
			log.Warn("no worker is pulling jobs: start `dialogfarm worker --nats URL` on a machine that can drive them",
				zap.String("run", run), zap.Uint64("jobs_waiting", n))
		}
	})
}
