package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"dialogfarm/driver"
)

// Run statuses.
const (
	RunRunning   = "running"
	RunDone      = "done"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
	RunDryRun    = "dry_run"
)

// DriveStatus is how far the drive nodes of a run have got.
type DriveStatus struct {
	Node           string  `json:"node"`
	Done           int     `json:"done"`
	Total          int     `json:"total"`
	OK             int     `json:"ok"`
	Failed         int     `json:"failed"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	ETASeconds     float64 `json:"eta_seconds"`
	PerMinute      float64 `json:"dialogues_per_minute"`
}

// RunInfo is what is known of one run.
type RunInfo struct {
	ID       string       `json:"id"`
	Pipeline string       `json:"pipeline"`
	Revision int          `json:"revision"`
	Out      string       `json:"out"`
	Status   string       `json:"status"`
	Limit    int          `json:"limit,omitempty"`
	Order    []string     `json:"order"`
	Nodes    []NodeState  `json:"nodes"`
	Drive    *DriveStatus `json:"drive,omitempty"`
	Findings []Finding    `json:"findings,omitempty"`
	Spec     *Spec        `json:"spec"`
	Started  time.Time    `json:"started"`
	Finished time.Time    `json:"finished,omitzero"`
	Error    string       `json:"error,omitempty"`
	// External marks a run folder of `dialogfarm run` found in the runs
	// folder: listed and shown, not started or cancelled here.
	External bool `json:"external,omitempty"`
}

// EnvFunc builds the environment of a run into out; done is called when
// the run ends.
type EnvFunc func(out string) (env RunEnv, done func(), err error)

// Runs starts pipeline runs in the background, one at a time per
// pipeline, each into DIR/NAME so an edited pipeline re-runs only the
// nodes whose cache keys changed. Each run's info is kept in
// DIR/.runs/ID.json, so runs outlive the server (one that was running
// when it stopped is interrupted); the folders `dialogfarm run` made in
// DIR are listed beside them.
type Runs struct {
	dir  string
	reg  *Registry
	env  EnvFunc
	log  *zap.Logger
	base context.Context
	// OnFinish, when set, is called after a run ends (e.g. to write its
	// dashboard).
	OnFinish func(RunInfo)

	wg   sync.WaitGroup
	mu   sync.Mutex
	runs map[string]*runEntry
	ids  []string
	seq  int // the highest N of the run ids NAME-N
	subs map[chan string]struct{}
}

type runEntry struct {
	info   RunInfo
	cancel context.CancelFunc
}

// NewRuns keeps runs under dir, with those recorded there by earlier
// servers; base bounds every run's life.
func NewRuns(base context.Context, dir string, reg *Registry, env EnvFunc, log *zap.Logger) *Runs {
	if log == nil {
		log = zap.NewNop()
	}
	r := &Runs{dir: dir, reg: reg, env: env, log: log, base: base, runs: map[string]*runEntry{}, subs: map[chan string]struct{}{}}
	r.load()
	return r
}

// ErrBusy means the pipeline is already running.
var ErrBusy = errors.New("the pipeline is already running")

// Start validates spec and, unless dryRun, runs it in the background.
func (r *Runs) Start(name string, spec *Spec, rev int, dryRun bool, limit int) (RunInfo, error) {
	env, done, err := r.env(filepath.Join(r.dir, name))
	if err != nil {
		return RunInfo{}, err
	}
	order, _ := spec.Topo()
	info := RunInfo{Pipeline: name, Revision: rev, Out: env.Out, Limit: limit, Order: order, Started: time.Now().UTC(), Spec: spec,
		Findings: Validate(spec, r.reg, env.Validate)}
	for _, id := range order {
		info.Nodes = append(info.Nodes, NodeState{ID: id, Op: spec.Node(id).Op, Status: NodePending})
	}
	if dryRun || len(Errors(info.Findings)) > 0 {
		done()
		info.Status, info.Finished = RunDryRun, info.Started
		if !dryRun {
			info.Status, info.Error = RunFailed, ErrInvalid.Error()
		}
		return info, nil
	}
	r.mu.Lock()
	for _, e := range r.runs {
		if e.info.Pipeline == name && e.info.Status == RunRunning {
			r.mu.Unlock()
			done()
			return RunInfo{}, fmt.Errorf("pipeline %s: %w (run %s)", name, ErrBusy, e.info.ID)
		}
	}
	r.seq++
	info.ID = fmt.Sprintf("%s-%d", name, r.seq)
	info.Status = RunRunning
	ctx, cancel := context.WithCancel(r.base)
	e := &runEntry{info: info, cancel: cancel}
	r.runs[info.ID], r.ids = e, append(r.ids, info.ID)
	r.mu.Unlock()
	env.Limit = limit
	r.save(info)
	env.OnNode = func(st NodeState) {
		r.updateSaved(info.ID, func(in *RunInfo) {
			if i := slices.IndexFunc(in.Nodes, func(n NodeState) bool { return n.ID == st.ID }); i >= 0 {
				in.Nodes[i] = st
			}
		})
	}
	env.DriveProgress = func(node string, p driver.Progress) {
		r.update(info.ID, func(in *RunInfo) { in.Drive = driveStatus(node, p) })
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer cancel()
		defer done()
		_, err := RunSpec(ctx, spec, r.reg, env)
		final := r.updateSaved(info.ID, func(in *RunInfo) {
			in.Finished, in.Status = time.Now().UTC(), RunDone
			switch {
			case err != nil && ctx.Err() != nil:
				in.Status, in.Error = RunCancelled, err.Error()
			case err != nil:
				in.Status, in.Error = RunFailed, err.Error()
			}
		})
		if r.OnFinish != nil {
			r.OnFinish(final)
		}
		r.notify(info.ID)
	}()
	r.notify(info.ID)
	return r.Get(info.ID)
}

func driveStatus(node string, p driver.Progress) *DriveStatus {
	d := &DriveStatus{Node: node, Done: p.Done, Total: p.Total, OK: p.OK, Failed: p.Failed, ElapsedSeconds: p.Elapsed.Seconds()}
	if p.Done > 0 && p.Elapsed > 0 {
		d.ETASeconds = p.Elapsed.Seconds() / float64(p.Done) * float64(p.Total-p.Done)
		d.PerMinute = float64(p.Done) / p.Elapsed.Minutes()
	}
	return d
}

// updateSaved is update for a change the runs index must hold before
// anyone sees it: it writes the run's info to the index while the change
// is still invisible, so a run seen done (Get, List, a subscriber) is
// recorded done, and a server started next over the same folder lists it
// so. (Saved after the update, a run was once seen done while its index
// file still said running: the next server listed it interrupted.)
func (r *Runs) updateSaved(id string, f func(*RunInfo)) RunInfo {
	return r.change(id, f, r.save)
}

// update changes a run's info and returns a copy of it.
func (r *Runs) update(id string, f func(*RunInfo)) RunInfo {
	return r.change(id, f, nil)
}

// change applies f to a run's info and, before the change is visible,
// passes a copy to persist (when given); then it tells the subscribers.
func (r *Runs) change(id string, f func(*RunInfo), persist func(RunInfo)) RunInfo {
	var info RunInfo
	r.mu.Lock()
	if e, ok := r.runs[id]; ok {
		f(&e.info)
		info = e.info.copy()
		if persist != nil {
			persist(info)
		}
	}
	r.mu.Unlock()
	r.notify(id)
	return info
}

// copy is info with its own nodes and drive status.
func (info RunInfo) copy() RunInfo {
	info.Nodes = slices.Clone(info.Nodes)
	if info.Drive != nil {
		d := *info.Drive
		info.Drive = &d
	}
	return info
}

func (r *Runs) notify(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for ch := range r.subs {
		select {
		case ch <- id:
		default:
		}
	}
}

// Subscribe returns a channel told the id of each run that changed.
func (r *Runs) Subscribe() (<-chan string, func()) {
	ch := make(chan string, 64)
	r.mu.Lock()
	r.subs[ch] = struct{}{}
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		delete(r.subs, ch)
		r.mu.Unlock()
	}
}

// ErrNoRun means no run has that id.
var ErrNoRun = errors.New("no such run")

// Get returns a copy of a run's info: a run of this index, or a run
// folder of `dialogfarm run` in the runs folder.
func (r *Runs) Get(id string) (RunInfo, error) {
	r.mu.Lock()
	e, ok := r.runs[id]
	var info RunInfo
	if ok {
		info = e.info.copy()
	}
	known := r.knownLocked()
	r.mu.Unlock()
	if ok {
		return info, nil
	}
	if id != "" && id == filepath.Base(id) && !strings.HasPrefix(id, ".") && !known[filepath.Join(r.dir, id)] {
		if info, ok := readFolder(filepath.Join(r.dir, id)); ok {
			return info, nil
		}
	}
	return RunInfo{}, fmt.Errorf("run %q: %w", id, ErrNoRun)
}

// knownLocked are this index's run ids and output folders.
func (r *Runs) knownLocked() map[string]bool {
	known := map[string]bool{}
	for id, e := range r.runs {
		known[id], known[filepath.Clean(e.info.Out)] = true, true
	}
	return known
}

// List returns the runs of this index, newest first, then the run
// folders of `dialogfarm run`, newest first.
func (r *Runs) List() []RunInfo {
	r.mu.Lock()
	ids := slices.Clone(r.ids)
	known := r.knownLocked()
	r.mu.Unlock()
	var out []RunInfo
	for i := len(ids) - 1; i >= 0; i-- {
		if info, err := r.Get(ids[i]); err == nil {
			out = append(out, info)
		}
	}
	return append(out, r.folders(known)...)
}

// Cancel stops a running run.
func (r *Runs) Cancel(id string) (RunInfo, error) {
	r.mu.Lock()
	e, ok := r.runs[id]
	r.mu.Unlock()
	if !ok {
		if info, err := r.Get(id); err == nil && info.External {
			return info, fmt.Errorf("run %s: %w: stop that process", id, ErrExternal)
		}
		return RunInfo{}, fmt.Errorf("run %q: %w", id, ErrNoRun)
	}
	e.cancel()
	return r.Get(id)
}

// Wait waits for every run to end (cancel the base context first to
// make them end).
func (r *Runs) Wait() { r.wg.Wait() }
