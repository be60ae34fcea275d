package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"dialogfarm/internal/jsonl"
	"dialogfarm/internal/runfiles"
)

// Batch is a set of mutations applied all or nothing to the revision it
// was made against.
type Batch struct {
	BaseRevision int        `json:"base_revision" jsonschema:"the revision the mutations were made against (get_pipeline gives it)"`
	Mutations    []Mutation `json:"mutations"`
	DryRun       bool       `json:"dry_run,omitempty" jsonschema:"validate only, commit nothing"`
	Author       string     `json:"author,omitempty"`
	Message      string     `json:"message,omitempty"`
}

// Entry is one committed batch in a pipeline's journal.
type Entry struct {
	Revision  int        `json:"revision"`
	Time      time.Time  `json:"time"`
	Author    string     `json:"author,omitempty"`
	Message   string     `json:"message,omitempty"`
	Mutations []Mutation `json:"mutations"`
	Nodes     []string   `json:"nodes"`
}

// Conflict says a batch was made against an old revision and what has
// been committed since.
type Conflict struct {
	BaseRevision    int     `json:"base_revision"`
	CurrentRevision int     `json:"current_revision"`
	Since           []Entry `json:"since"`
	Message         string  `json:"message"`
}

// ApplyResult is what applying a batch did.
type ApplyResult struct {
	Pipeline  string    `json:"pipeline"`
	Revision  int       `json:"revision"`
	Committed bool      `json:"committed"`
	DryRun    bool      `json:"dry_run,omitempty"`
	Findings  []Finding `json:"findings"`
	Conflict  *Conflict `json:"conflict,omitempty"`
	Spec      *Spec     `json:"spec,omitempty"`
}

// Change is published after each commit.
type Change struct {
	Pipeline string `json:"pipeline"`
	Revision int    `json:"revision"`
	Author   string `json:"author,omitempty"`
}

// ErrNoPipeline means no pipeline has that name.
var ErrNoPipeline = errors.New("no such pipeline")

// Store keeps pipelines as journals of committed batches under a folder:
// NAME.journal.jsonl (one Entry a line, synced) and NAME.yaml (the current
// pipeline, rewritten after each commit for people to read). The state is
// the replay of the journal; a batch that does not validate, or was made
// against an older revision, changes nothing.
type Store struct {
	dir string
	reg *Registry
	env Env

	mu    sync.Mutex
	pipes map[string]*stored
	subs  map[chan Change]struct{}
}

type stored struct {
	spec    *Spec
	rev     int
	journal []Entry
}

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// OpenStore loads every journal in dir.
func OpenStore(dir string, reg *Registry, env Env) (*Store, error) {
	if err := runfiles.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("open pipeline store: %w", err)
	}
	st := &Store{dir: dir, reg: reg, env: env, pipes: map[string]*stored{}, subs: map[chan Change]struct{}{}}
	files, _ := filepath.Glob(filepath.Join(dir, "*.journal.jsonl"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".journal.jsonl")
		p, err := replay(f, name)
		if err != nil {
			return nil, err
		}
		st.pipes[name] = p
	}
	return st, nil
}

func emptySpec(name string) *Spec {
	return &Spec{APIVersion: APIVersion, Kind: Kind, Name: name, Nodes: []Node{}}
}

// replay rebuilds a pipeline from its journal.
func replay(path, name string) (*stored, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	p := &stored{spec: emptySpec(name)}
	err = jsonl.Each(bytes.NewReader(data), path, func(_ int, line []byte) error {
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			return err
		}
		for i, m := range e.Mutations {
			if f := m.apply(p.spec, i); f != nil {
				return fmt.Errorf("revision %d: %s", e.Revision, f.Message)
			}
		}
		p.rev = e.Revision
		p.journal = append(p.journal, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// List names the pipelines with their revisions.
func (s *Store) List() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for n, p := range s.pipes {
		out[n] = p.rev
	}
	return out
}

// Get returns a copy of a pipeline and its revision.
func (s *Store) Get(name string) (*Spec, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pipes[name]
	if !ok {
		return nil, 0, fmt.Errorf("pipeline %q: %w (have %s)", name, ErrNoPipeline, strings.Join(sortedKeys(s.pipes), ", "))
	}
	return p.spec.Clone(), p.rev, nil
}

// History returns a pipeline's journal.
func (s *Store) History(name string) ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pipes[name]
	if !ok {
		return nil, fmt.Errorf("pipeline %q: %w", name, ErrNoPipeline)
	}
	return slices.Clone(p.journal), nil
}

// At returns a pipeline as it was at revision rev.
func (s *Store) At(name string, rev int) (*Spec, error) {
	hist, err := s.History(name)
	if err != nil {
		return nil, err
	}
	spec := emptySpec(name)
	for _, e := range hist {
		if e.Revision > rev {
			break
		}
		for i, m := range e.Mutations {
			if f := m.apply(spec, i); f != nil {
				return nil, errors.New(f.Message)
			}
		}
	}
	return spec, nil
}

// Validate checks a spec against the store's registry and environment.
func (s *Store) Validate(spec *Spec) []Finding { return Validate(spec, s.reg, s.env) }

// Registry is the store's operator registry.
func (s *Store) Registry() *Registry { return s.reg }

// Apply applies a batch to pipeline name (created empty at revision 0 by a
// batch with base_revision 0). It commits only when the base revision is
// current, every mutation applies and the result has no error finding.
func (s *Store) Apply(name string, b Batch) (ApplyResult, error) {
	if !nameRe.MatchString(name) {
		return ApplyResult{}, fmt.Errorf("pipeline name %q: use lower-case letters, digits, _ and -", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pipes[name]
	if !ok {
		if b.BaseRevision != 0 {
			return ApplyResult{}, fmt.Errorf("pipeline %q: %w (a batch with base_revision 0 creates it)", name, ErrNoPipeline)
		}
		p = &stored{spec: emptySpec(name)}
	}
	res := ApplyResult{Pipeline: name, Revision: p.rev, DryRun: b.DryRun, Findings: []Finding{}}
	if b.BaseRevision != p.rev {
		res.Conflict = conflict(p, b.BaseRevision)
		return res, nil
	}
	next := p.spec.Clone()
	for i, m := range b.Mutations {
		if f := m.apply(next, i); f != nil {
			res.Findings = append(res.Findings, *f)
			return res, nil
		}
	}
	res.Findings = append(res.Findings, Validate(next, s.reg, s.env)...)
	res.Spec = next
	if len(Errors(res.Findings)) > 0 || b.DryRun || len(b.Mutations) == 0 {
		return res, nil
	}
	e := Entry{Revision: p.rev + 1, Time: time.Now().UTC(), Author: b.Author, Message: b.Message, Mutations: b.Mutations}
	for _, m := range b.Mutations {
		for _, n := range m.touched() {
			if !slices.Contains(e.Nodes, n) {
				e.Nodes = append(e.Nodes, n)
			}
		}
	}
	if err := s.commit(name, e, next); err != nil {
		return res, err
	}
	p.spec, p.rev, p.journal = next, e.Revision, append(p.journal, e)
	s.pipes[name] = p
	res.Revision, res.Committed = p.rev, true
	for ch := range s.subs {
		select {
		case ch <- Change{Pipeline: name, Revision: p.rev, Author: b.Author}:
		default: // a slow subscriber misses a change, not the state: it rereads
		}
	}
	return res, nil
}

// conflict describes what was committed after base.
func conflict(p *stored, base int) *Conflict {
	c := &Conflict{BaseRevision: base, CurrentRevision: p.rev}
	var who []string
	for _, e := range p.journal {
		if e.Revision > base {
			c.Since = append(c.Since, e)
			who = append(who, fmt.Sprintf("r%d by %s (%s) changed %s", e.Revision, orUnknown(e.Author), e.Message, strings.Join(e.Nodes, ", ")))
		}
	}
	c.Message = fmt.Sprintf("base revision %d is stale: the pipeline is at revision %d; since then: %s. Get the pipeline again and reapply your mutations on revision %d.",
		base, p.rev, strings.Join(who, "; "), p.rev)
	return c
}

func orUnknown(s string) string {
	if s == "" {
		return "someone"
	}
	return s
}

// commit appends the entry to the journal (synced) and rewrites the YAML.
func (s *Store) commit(name string, e Entry, spec *Spec) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("journal %s: %w", name, err)
	}
	f, err := runfiles.OpenAppend(filepath.Join(s.dir, name+".journal.jsonl"))
	if err != nil {
		return fmt.Errorf("journal %s: %w", name, err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("journal %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("journal %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("journal %s: %w", name, err)
	}
	data, err := spec.YAML()
	if err != nil {
		return err
	}
	return runfiles.WriteAtomic(filepath.Join(s.dir, name+".yaml"), data)
}

// Revert commits, on top of base, the pipeline as it was at revision to.
func (s *Store) Revert(name string, to, base int, author string) (ApplyResult, error) {
	old, err := s.At(name, to)
	if err != nil {
		return ApplyResult{}, err
	}
	return s.Apply(name, Batch{BaseRevision: base, Author: author, Message: fmt.Sprintf("revert to r%d", to),
		Mutations: []Mutation{{Op: MutReplace, Spec: old}}})
}

// Subscribe returns a channel told of every commit, and a function that
// ends the subscription.
func (s *Store) Subscribe() (<-chan Change, func()) {
	ch := make(chan Change, 16)
	s.mu.Lock()
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}
}
