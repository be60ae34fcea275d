package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"go.uber.org/zap"

	"dialogfarm/dialog"
	"dialogfarm/redact"
)

// Where the sanitised copies of the repositories and their record live in
// the run folder.
const (
	WorkspaceDir   = "workspace"
	RedactionsFile = "redactions.json"
)

// redactor returns r, or a new one when r is nil.
func redactor(r *redact.Redactor) (*redact.Redactor, error) {
	if r != nil {
		return r, nil
	}
	d, err := redact.NewDetector()
	if err != nil {
		return nil, fmt.Errorf("build secret detector: %w", err)
	}
	return redact.NewRedactor(d), nil
}

// sanitiseRepos makes (or, on a resumed run, checks and reuses) the
// sanitised copy of each repository under out/workspace, records them in
// out/redactions.json and returns the copies' folders in the order of
// repos. A repository that is already a copy in out is used as it is.
// Copies are named by absolute paths, so that a copy is known as one
// whatever folder the run was started from (with a relative --out, the
// drive stage used to copy the configs stage's copy again).
func sanitiseRepos(ctx context.Context, r *redact.Redactor, out string, repos []string, log *zap.Logger) ([]string, error) {
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("run folder %s: %w", out, err)
	}
	path := filepath.Join(out, RedactionsFile)
	rs, err := redact.ReadRedactions(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(out, WorkspaceDir), 0o700); err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	copies := make([]string, len(repos))
	for i, repo := range repos {
		abs, err := filepath.Abs(repo)
		if err != nil {
			return nil, fmt.Errorf("repository %s: %w", repo, err)
		}
		if rs.IsCopy(abs) || rs.IsCopy(repo) { // an older run recorded its copies as given
			copies[i] = abs
			continue
		}
		old, found := rs.Find(abs)
		dst := old.Dir
		if !found {
			dst = copyDir(out, abs, rs)
		}
		c, err := redact.Sanitise(ctx, r, abs, dst, old.Digest)
		if err != nil {
			return nil, err
		}
		if found {
			// The copy is the one recorded (same digest): so are its
			// counts. The scan that checked it found the run's secrets
			// already known to r (the plan node sanitised first, or an
			// earlier start of the run) and counts them as no new ones.
			c.Stats = old.Stats
		}
		rs.Put(c)
		if err := redact.WriteRedactions(path, rs); err != nil {
			return nil, err
		}
		log.Info("sanitised repository", zap.String("repo", abs), zap.String("copy", dst), zap.Bool("reused", found),
			zap.Int("files", c.Files), zap.String("secrets", c.Stats.Summary()))
		copies[i] = dst
	}
	return copies, nil
}

// copyDir names a new copy out/workspace/<base name>, with -2, -3, … when
// another repository of that name is there already.
func copyDir(out, repo string, rs redact.Redactions) string {
	base := filepath.Base(repo)
	dir := filepath.Join(out, WorkspaceDir, base)
	for n := 2; rs.IsCopy(dir); n++ {
		dir = filepath.Join(out, WorkspaceDir, base+"-"+strconv.Itoa(n))
	}
	return dir
}

// sanitiseConfigs points every config at the sanitised copy of its
// repository (making copies under out as needed) and redacts its query
// texts, recording the query counts in out/redactions.json.
func sanitiseConfigs(ctx context.Context, r *redact.Redactor, out string, configs []dialog.ChatConfig, log *zap.Logger) ([]dialog.ChatConfig, error) {
	var repos []string
	seen := map[string]bool{}
	for _, c := range configs {
		if !seen[c.Repo] {
			seen[c.Repo] = true
			repos = append(repos, c.Repo)
		}
	}
	copies, err := sanitiseRepos(ctx, r, out, repos, log)
	if err != nil {
		return nil, err
	}
	copyOf := map[string]string{}
	for i, repo := range repos {
		copyOf[repo] = copies[i]
	}
	before := r.Stats()
	res := make([]dialog.ChatConfig, len(configs))
	for i, c := range configs {
		c.Repo = copyOf[c.Repo]
		c.Turns = append([]dialog.TurnSpec(nil), c.Turns...)
		for j := range c.Turns {
			c.Turns[j].Query, _ = r.Redact(c.Turns[j].Query)
		}
		res[i] = c
	}
	path := filepath.Join(out, RedactionsFile)
	rs, err := redact.ReadRedactions(path)
	if err != nil {
		return nil, err
	}
	rs.SetQueries(r.Stats().Minus(before))
	return res, redact.WriteRedactions(path, rs)
}
