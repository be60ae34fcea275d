package farm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"dialogfarm/dialog"
)

// Records is the run folder's record log (*driver.RecordLog).
type Records interface {
	Done(id string) bool
	Append(d dialog.Dialogue) error
}

// CollectConfig says what a run waits for and where its outcomes go.
type CollectConfig struct {
	Run string
	// Want are the config ids the run waits for (those it enqueued).
	Want []string
	// Records receives one record per config: its result, or a failed
	// record naming the dead letter.
	Records Records
	// Attempts and Dead receive the failed attempts that were retried
	// and the dead letters (one JSON value each); nil drops them.
	Attempts, Dead func(v any) error
	// FilesDir, when set, receives the files results and attempts bring
	// back (a remote worker's failure artifacts), in a folder per config;
	// the record's Artifacts names it.
	FilesDir string
	// Progress is called after each config's outcome.
	Progress func(Progress)
	Metrics  *Metrics
}

// Progress says how far a collected run has got.
type Progress struct {
	Done, Total, OK, Failed, Dead, Retried int
	// Refused counts results and attempts not bound to a delivery of
	// their job to the worker that published them (see seal.go).
	Refused int
	Elapsed time.Duration
	Last    dialog.Dialogue
}

// FailedStepDead is the failed step of a dead-lettered config's record.
const FailedStepDead = "dead_letter"

// deadNonce seals a dead letter (the collector's, one per config).
const deadNonce = "dead-letter"

// Collect writes the run's results into its record log until every wanted
// config has an outcome or ctx ends. It is safe to run again after a crash:
// its consumers are durable (what was acknowledged is not delivered again)
// and a config the record log already holds is not appended twice. Once
// every wanted config has its outcome, the farm forgets the run (forget):
// Want must be every config of the run not recorded yet.
func (q *Queue) Collect(ctx context.Context, cfg CollectConfig, log *zap.Logger) (Progress, error) {
	start := time.Now()
	prog := Progress{Total: len(cfg.Want)}
	remaining := make(map[string]bool, len(cfg.Want))
	for _, id := range cfg.Want {
		remaining[id] = true
	}
	if len(remaining) == 0 {
		return prog, nil
	}
	key, err := q.runKey(cfg.Run)
	if err != nil {
		return prog, err
	}
	type item struct {
		kind string
		msg  jetstream.Msg
		err  error // the source stopped with it
	}
	in := make(chan item)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sources := collectSources(cfg.Run)
	refused := newRefusals()
	var iters []jetstream.MessagesContext
	var events jetstream.Consumer
	stopSources := func() {
		cancel() // first, so that the sources see a stop as the end
		for _, it := range iters {
			it.Stop()
		}
	}
	defer stopSources()
	for _, src := range sources {
		// The ack wait is how long messages a killed collector held stay
		// pending before the resumed run's collector gets them again,
		// and the end of that run waits for them (the last attempts):
		// with 30 s, a resumed run stalled up to 30 s after its last
		// record. A message is acknowledged as soon as it is handled
		// (a record appended), so 5 s is ample; one handled twice is
		// dropped by remaining (results, dead letters).
		var cons jetstream.Consumer
		err := retry(ctx, q.js.Conn(), func(ctx context.Context) (err error) {
			cons, err = q.js.CreateOrUpdateConsumer(ctx, src.stream, jetstream.ConsumerConfig{
				Durable: src.consumer, AckPolicy: jetstream.AckExplicitPolicy,
				FilterSubjects: append([]string{src.subject}, src.more...), AckWait: 5 * time.Second, InactiveThreshold: 7 * 24 * time.Hour,
			})
			return err
		})
		if err != nil {
			return prog, fmt.Errorf("collector consumer on %s: %w", src.stream, err)
		}
		if src.kind == "event" {
			events = cons
		}
		// Pull requests that expire every 5 s, each with heartbeats: a
		// pull left with a consumer leader on a node that stopped is
		// replaced within seconds (with nats.go's 30 s default, a
		// 3-node cluster losing a node left the collector without
		// results for 37 s, and then the iterator said no heartbeat).
		it, err := cons.Messages(jetstream.PullMaxMessages(16), jetstream.PullExpiry(5*time.Second))
		if err != nil {
			return prog, fmt.Errorf("collect from %s: %w", src.stream, err)
		}
		iters = append(iters, it)
		go func() {
			for {
				msg, err := it.Next()
				if errors.Is(err, jetstream.ErrNoHeartbeat) {
					// The iterator has dropped the lost pull and asks the
					// consumer's current leader again.
					log.Warn("collector's pull got no heartbeat; pulling again", zap.String("stream", src.stream))
					continue
				}
				x := item{kind: src.kind, msg: msg}
				if err != nil {
					if errors.Is(err, jetstream.ErrMsgIteratorClosed) && cctx.Err() != nil {
						return // stopped: the collection is over
					}
					x.err = fmt.Errorf("collect from %s: %w", src.stream, err)
				}
				select {
				case in <- x:
				case <-cctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	handle := func(it item) error {
		if it.err != nil {
			return it.err
		}
		prog.Elapsed = time.Since(start)
		var err error
		switch it.kind {
		case "result":
			err = q.collectResult(ctx, it.msg, cfg, key, remaining, &prog, log)
		case "dead":
			err = q.collectDead(it.msg, cfg, key, remaining, &prog, log)
		case "event":
			err = q.collectEvent(ctx, it.msg, cfg, key, &prog, refused, log)
		}
		if err != nil {
			_ = it.msg.Nak()
			return err
		}
		if err := it.msg.Ack(); err != nil {
			log.Warn("ack collected message", zap.String("subject", it.msg.Subject()), zap.Error(err))
		}
		return nil
	}
	for len(remaining) > 0 {
		select {
		case <-ctx.Done():
			return prog, ctx.Err()
		case it := <-in:
			if err := handle(it); err != nil {
				return prog, err
			}
		}
	}
	// A worker publishes a retried attempt before the config's result, so
	// every attempt of this run is in the events stream by now: take the
	// ones not yet collected, so attempts.jsonl is whole when the run ends.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := events.Info(ctx)
		if err != nil {
			return prog, fmt.Errorf("collect the last attempts: %w", err)
		}
		if info.NumPending == 0 && info.NumAckPending == 0 {
			stopSources()
			q.forget(ctx, cfg.Run, sources, log)
			return prog, nil
		}
		select {
		case <-ctx.Done():
			return prog, ctx.Err()
		case it := <-in:
			if err := handle(it); err != nil {
				return prog, err
			}
		case <-tick.C:
		}
	}
}

// collectSource is one stream a run's collector reads: its durable
// consumer, the run's subjects on it, and any other subject it reads.
type collectSource struct {
	kind, stream, consumer, subject string
	more                            []string
}

func collectSources(run string) []collectSource {
	t := token(run)
	src := func(kind, stream, prefix string, more ...string) collectSource {
		return collectSource{kind: kind, stream: stream, consumer: "collect_" + t + "_" + kind, subject: prefix + t + ".>", more: more}
	}
	return []collectSource{
		src("result", ResultsStream, "dfarm.results."),
		src("dead", DeadStream, "dfarm.dead."),
		src("event", EventsStream, "dfarm.events.", maxDeliveriesAdvisory),
	}
}

// forget takes a collected run's outcomes off the farm (its results, dead
// letters and attempts are in the run folder now) and deletes its
// collector's consumers: the farm's store would otherwise keep every run
// it ever held. A result a redelivered job publishes later stays, and the
// farm's status tells it apart (RunStatus.Late).
func (q *Queue) forget(ctx context.Context, run string, sources []collectSource, log *zap.Logger) {
	for _, src := range sources {
		err := q.js.DeleteConsumer(ctx, src.stream, src.consumer)
		if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			log.Warn("delete a collected run's consumer", zap.String("run", run), zap.Error(err))
		}
		s, err := q.js.Stream(ctx, src.stream)
		if err == nil {
			err = s.Purge(ctx, jetstream.WithPurgeSubject(src.subject))
		}
		if err != nil {
			log.Warn("take a collected run's outcomes off the farm", zap.String("run", run), zap.Error(err))
		}
	}
}

// bound says whether a result or attempt that came on subject, for config
// id with delivery dl, is from a worker the config's job was delivered to:
// its subject names the config and the user that published it, and it
// echoes the job's seal. Otherwise it is logged and counted as refused.
func bound(subject, prefix, run, id string, dl Delivery, key []byte, cfg CollectConfig, prog *Progress, log *zap.Logger) bool {
	config, user, ok := subjectUser(subject, prefix)
	if ok && config == token(id) && sealed(key, run, id, dl.Nonce, dl.Token) {
		return true
	}
	prog.Refused++
	cfg.Metrics.Refused()
	log.Warn("refused a result not bound to a delivery of its job to the worker that published it",
		zap.String("subject", subject), zap.String("user", user), zap.String("config", id), zap.Uint64("job_seq", dl.JobSeq))
	return false
}

func (q *Queue) collectResult(ctx context.Context, msg jetstream.Msg, cfg CollectConfig, key []byte, remaining map[string]bool, prog *Progress, log *zap.Logger) error {
	var r Result
	if err := json.Unmarshal(msg.Data(), &r); err != nil {
		log.Warn("refused an undecodable result", zap.String("subject", msg.Subject()), zap.Error(err))
		prog.Refused++
		cfg.Metrics.Refused()
		return nil
	}
	id := r.Dialogue.ConfigID
	if !bound(msg.Subject(), resultPrefix(cfg.Run), cfg.Run, id, r.Delivery, key, cfg, prog, log) {
		return nil
	}
	if !remaining[id] {
		return nil // an outcome this run already has (or none it waits for)
	}
	q.collectFiles(ctx, cfg, id, r.Files, &r.Dialogue.Artifacts, log)
	if !cfg.Records.Done(id) {
		if err := cfg.Records.Append(r.Dialogue); err != nil {
			return err
		}
	}
	delete(remaining, id)
	prog.Done++
	if r.Dialogue.Status == dialog.StatusOK {
		prog.OK++
	} else {
		prog.Failed++
	}
	prog.Last = r.Dialogue
	if cfg.Progress != nil {
		cfg.Progress(*prog)
	}
	return nil
}

func (q *Queue) collectDead(msg jetstream.Msg, cfg CollectConfig, key []byte, remaining map[string]bool, prog *Progress, log *zap.Logger) error {
	var dl DeadLetter
	if err := json.Unmarshal(msg.Data(), &dl); err != nil || msg.Subject() != deadSubject(cfg.Run, dl.ConfigID) ||
		!sealed(key, cfg.Run, dl.ConfigID, deadNonce, dl.Token) {
		// Dead letters are the collector's own; anything else on their
		// subjects is a reply another client had the server put there.
		log.Warn("refused a dead letter the collector did not write", zap.String("subject", msg.Subject()), zap.Error(err))
		prog.Refused++
		cfg.Metrics.Refused()
		return nil
	}
	if !remaining[dl.ConfigID] {
		return nil
	}
	if cfg.Dead != nil {
		if err := cfg.Dead(dl); err != nil {
			return err
		}
	}
	d := dialog.Dialogue{ConfigID: dl.ConfigID, Config: dl.Config, Status: dialog.StatusFailed,
		FailedStep: FailedStepDead, Error: dl.Reason, StartedAt: dl.At}
	if !cfg.Records.Done(dl.ConfigID) {
		if err := cfg.Records.Append(d); err != nil {
			return err
		}
	}
	delete(remaining, dl.ConfigID)
	prog.Done++
	prog.Dead++
	prog.Last = d
	cfg.Metrics.Dead()
	if cfg.Progress != nil {
		cfg.Progress(*prog)
	}
	return nil
}

// collectEvent writes a retried attempt, or turns a max-deliveries
// advisory for one of this run's jobs into a dead letter.
func (q *Queue) collectEvent(ctx context.Context, msg jetstream.Msg, cfg CollectConfig, key []byte, prog *Progress, refused *refusals, log *zap.Logger) error {
	if !strings.HasPrefix(msg.Subject(), "$JS.EVENT.") {
		var a Attempt
		if err := json.Unmarshal(msg.Data(), &a); err != nil {
			log.Warn("refused an undecodable attempt", zap.String("subject", msg.Subject()), zap.Error(err))
			prog.Refused++
			cfg.Metrics.Refused()
			return nil
		}
		if !bound(msg.Subject(), attemptPrefix(cfg.Run), cfg.Run, a.Dialogue.ConfigID, a.Delivery, key, cfg, prog, log) {
			return nil
		}
		q.collectFiles(ctx, cfg, a.Dialogue.ConfigID, a.Files, &a.Dialogue.Artifacts, log)
		if a.Dialogue.FailedStep == FailedStepRecipe {
			refused.note(a, log)
		} else {
			prog.Retried++
		}
		if cfg.Attempts != nil {
			return cfg.Attempts(a)
		}
		return nil
	}
	var adv struct {
		StreamSeq  uint64 `json:"stream_seq"`
		Deliveries uint64 `json:"deliveries"`
	}
	if err := json.Unmarshal(msg.Data(), &adv); err != nil {
		return fmt.Errorf("advisory %s: %w", msg.Subject(), err)
	}
	raw, err := q.jobs.GetMsg(ctx, adv.StreamSeq)
	if err != nil {
		log.Debug("max-deliveries advisory for a job that is gone", zap.Uint64("seq", adv.StreamSeq), zap.Error(err))
		return nil
	}
	var job Job
	if err := json.Unmarshal(raw.Data, &job); err != nil || job.Run != cfg.Run || !ownJob(raw.Data, key, cfg.Run, job.Config.ID) {
		return nil // another run's job (its own collector handles it), or not a job
	}
	reason := fmt.Sprintf("no outcome after %d deliveries (workers died or stopped mid-dialogue each time)", adv.Deliveries)
	if last := refused.last[job.Config.ID]; last != "" {
		reason = fmt.Sprintf("no outcome after %d deliveries; the last: %s", adv.Deliveries, last)
	}
	dl := DeadLetter{Run: job.Run, ConfigID: job.Config.ID, Token: seal(key, job.Run, job.Config.ID, deadNonce),
		Config: job.Config, Deliveries: int(adv.Deliveries), At: time.Now().UTC(), Reason: reason}
	data, err := json.Marshal(dl)
	if err != nil {
		return err
	}
	if err := retry(ctx, q.js.Conn(), func(ctx context.Context) error {
		_, err := q.js.Publish(ctx, deadSubject(job.Run, job.Config.ID), data)
		return err
	}); err != nil {
		return fmt.Errorf("dead-letter %s: %w", job.Config.ID, err)
	}
	if err := q.jobs.DeleteMsg(ctx, adv.StreamSeq); err != nil {
		log.Warn("delete dead job", zap.String("config", job.Config.ID), zap.Error(err))
	}
	return nil
}
