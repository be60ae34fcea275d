package configgen

import (
	"context"
	"fmt"

	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
	"dialogfarm/redact"
)

// IndexRepos indexes the repositories as Generate does (the same walk,
// skips, parse and secret-free candidates) and says what they can
// realise: the plan is fitted to it before Generate places configs on
// the same files. Stats counts what was found and skipped.
func IndexRepos(ctx context.Context, cfg Config) (*profiles.RepoIndex, Stats, error) {
	stats := newStats()
	if cfg.Secrets == nil {
		d, err := redact.NewDetector()
		if err != nil {
			return nil, stats, fmt.Errorf("index repositories: %w", err)
		}
		cfg.Secrets = d
	}
	idx, err := buildIndex(ctx, cfg, &stats)
	if err != nil {
		return nil, stats, fmt.Errorf("index repositories: %w", err)
	}
	return idx.capacity(), stats, nil
}

// capacity counts, per language and cursor behaviour, the distinct
// targets (candidates) of the index.
func (idx *index) capacity() *profiles.RepoIndex {
	out := &profiles.RepoIndex{Files: map[string]int{}, Targets: map[string]map[string]int{}, OpenFiles: map[string]bool{}}
	for _, e := range idx.files {
		out.Files[e.lang]++
		if out.Targets[e.lang] == nil {
			out.Targets[e.lang] = map[string]int{}
		}
		for _, b := range vocab.Values(vocab.DimCursor) {
			out.Targets[e.lang][b] += len(e.cands[b])
		}
		if idx.hasOpenFiles(e) {
			out.OpenFiles[e.lang] = true
		}
	}
	return out
}

// hasOpenFiles reports whether f's repository holds another secret-free
// file the open_files reference can open next to it.
func (idx *index) hasOpenFiles(f *fileEntry) bool {
	for _, e := range idx.cleanByRepo[f.repo] {
		if e != f {
			return true
		}
	}
	return false
}
