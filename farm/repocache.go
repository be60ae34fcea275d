package farm

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// RepoCache keeps the repositories a worker's jobs name, fetched from the
// farm's repos bucket, in folders named by their content
// (DIR/<object>/<name>), for later jobs and runs.
//
// With a limit, once the cache holds more than it, the repositories no
// window shows are removed, least recently used first. Each slot holds a
// shared lock on the repository its window shows (DIR/<object>.lock,
// flock(2)), from the job that opened it until the slot drives a job on
// another one or the worker stops, and a removal takes that lock
// exclusively; a fetch holds DIR/<object>.fetch. So worker processes
// sharing the folder never remove what another one's windows show, nor
// fetch the same repository twice. A removal deletes the repository's
// lock file under its lock, and a fetch its own when done, so lock files
// do not pile up; whoever takes a lock checks that its file is still the
// one at the path (lockFile).
type RepoCache struct {
	dir   string
	limit int64 // bytes; 0: no limit
	q     *Queue
	log   *zap.Logger

	mu      sync.Mutex
	fetched int
	held    map[int]*heldRepo // by slot
}

// heldRepo is the repository a slot's window shows, and its shared lock.
type heldRepo struct {
	object string
	lock   *flock.Flock
}

// lockRetry is how often a lock another process holds is tried again.
const lockRetry = 50 * time.Millisecond

// NewRepoCache keeps repositories in dir, removing those no window shows
// beyond limit bytes (0: keeps every one).
func NewRepoCache(dir string, limit int64, q *Queue, log *zap.Logger) *RepoCache {
	return &RepoCache{dir: dir, limit: max(limit, 0), q: q, log: log, held: map[int]*heldRepo{}}
}

// Path returns the folder holding ref's repository, DIR/<object>/<name>,
// fetching it first if the cache lacks it, and holds it for slot until
// slot asks for another one (or Release).
func (c *RepoCache) Path(ctx context.Context, slot int, ref RepoRef) (string, error) {
	if !repoObject.MatchString(ref.Object) {
		return "", fmt.Errorf("repository object %q: not a sha256-<hex> name", ref.Object)
	}
	name := ref.Name
	if name == "" || name != filepath.Base(name) || !filepath.IsLocal(name) {
		name = "repo"
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return "", fmt.Errorf("create repository cache %s: %w", c.dir, err)
	}
	dst := filepath.Join(c.dir, ref.Object, name)
	if err := c.hold(ctx, slot, ref.Object); err != nil {
		return "", err
	}
	if _, err := os.Stat(dst); err != nil {
		if err := c.fetchLocked(ctx, ref, dst); err != nil {
			return "", err
		}
	}
	c.touch(ref.Object)
	return dst, nil
}

// Release lets go of every slot's repository.
func (c *RepoCache) Release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.held {
		_ = h.lock.Unlock()
	}
	clear(c.held)
}

// Fetched is how many repositories the cache fetched from the farm.
func (c *RepoCache) Fetched() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fetched
}

func (c *RepoCache) lockPath(object string) string {
	return filepath.Join(c.dir, object+".lock")
}

// hold takes a shared lock on object for slot, letting go of the one the
// slot held on another repository.
func (c *RepoCache) hold(ctx context.Context, slot int, object string) error {
	c.mu.Lock()
	h := c.held[slot]
	c.mu.Unlock()
	if h != nil && h.object == object {
		return nil
	}
	c.drop(slot)
	l, err := lockFile(ctx, c.lockPath(object), true)
	if err != nil {
		return fmt.Errorf("lock repository %s in the cache: %w", object, err)
	}
	c.mu.Lock()
	c.held[slot] = &heldRepo{object: object, lock: l}
	c.mu.Unlock()
	return nil
}

func (c *RepoCache) drop(slot int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.held[slot]; h != nil {
		_ = h.lock.Unlock()
		delete(c.held, slot)
	}
}

// touch marks object as used now: the lock file's time orders removals.
func (c *RepoCache) touch(object string) {
	now := time.Now()
	_ = os.Chtimes(c.lockPath(object), now, now)
}

// fetchLocked fetches ref into dst, one fetch of a repository at a time
// (DIR/<object>.fetch, exclusive), unless another slot or process did
// meanwhile; then it trims the cache. The caller holds the repository,
// so it is not removed meanwhile.
func (c *RepoCache) fetchLocked(ctx context.Context, ref RepoRef, dst string) error {
	l, err := lockFile(ctx, filepath.Join(c.dir, ref.Object+".fetch"), false)
	if err != nil {
		return fmt.Errorf("lock repository %s in the cache: %w", ref.Object, err)
	}
	// Deleted under the lock, so the file does not stay once the fetch
	// is done; whoever waited on it takes the lock on a new one.
	defer func() {
		_ = os.Remove(l.Path())
		_ = l.Unlock()
	}()
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	// What a fetch killed midway left: no one else fetches it now.
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(dst), ".fetch-*"))
	for _, s := range stale {
		_ = os.RemoveAll(s)
	}
	if err := c.fetch(ctx, ref, dst); err != nil {
		return err
	}
	c.Trim()
	return nil
}

// fetch unpacks ref into a temporary folder beside dst, checks the
// content's hash against its name and renames it to dst.
func (c *RepoCache) fetch(ctx context.Context, ref RepoRef, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("create repository cache %s: %w", c.dir, err)
	}
	obs, err := c.q.objectStore(ctx, ReposBucket)
	if err != nil {
		return err
	}
	var res jetstream.ObjectResult
	err = refusedDuring(ctx, c.q.js.Conn(), func(ctx context.Context) (err error) {
		res, err = obs.Get(ctx, ref.Object)
		return err
	})
	if err != nil {
		return fmt.Errorf("fetch repository %s: %w", ref.Object, err)
	}
	defer res.Close()
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".fetch-*")
	if err != nil {
		return fmt.Errorf("fetch repository %s: %w", ref.Object, err)
	}
	defer os.RemoveAll(tmp)
	sum := sha256.New()
	body := io.TeeReader(res, sum)
	files, err := unpack(body, tmp)
	if err == nil {
		_, err = io.Copy(io.Discard, body) // the rest, so that sum covers every byte
	}
	if err != nil {
		return fmt.Errorf("fetch repository %s: %w", ref.Object, err)
	}
	if got := "sha256-" + hex.EncodeToString(sum.Sum(nil)); got != ref.Object {
		return fmt.Errorf("fetch repository %s: its content hashes to %s", ref.Object, got)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("fetch repository %s: %w", ref.Object, err)
	}
	c.mu.Lock()
	c.fetched++
	c.mu.Unlock()
	c.log.Info("fetched repository from the farm", zap.String("object", ref.Object), zap.Int("files", files),
		zap.Int64("bytes", ref.Size), zap.String("into", dst))
	return nil
}

// cached is one repository in the cache folder.
type cached struct {
	object string
	bytes  int64
	used   time.Time
}

// Trim removes repositories no window shows, least recently used first,
// while the cache holds more than its limit, and what removals killed
// midway left. The worker calls it when it starts; a fetch, after.
func (c *RepoCache) Trim() {
	if c.limit == 0 {
		return
	}
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.log.Warn("list the repository cache", zap.String("dir", c.dir), zap.Error(err))
		}
		return
	}
	var repos []cached
	var total int64
	for _, e := range entries {
		p := filepath.Join(c.dir, e.Name())
		switch {
		case e.IsDir() && strings.HasPrefix(e.Name(), ".remove-"):
			_ = os.RemoveAll(p)
		case !e.IsDir() && strings.HasSuffix(e.Name(), ".lock"):
			if object := strings.TrimSuffix(e.Name(), ".lock"); repoObject.MatchString(object) {
				c.removeOrphanLock(object)
			}
		case e.IsDir() && repoObject.MatchString(e.Name()):
			r := cached{object: e.Name(), bytes: treeBytes(p)}
			if fi, err := os.Stat(c.lockPath(e.Name())); err == nil {
				r.used = fi.ModTime()
			} else if fi, err := e.Info(); err == nil {
				r.used = fi.ModTime()
			}
			repos = append(repos, r)
			total += r.bytes
		}
	}
	if total <= c.limit {
		return
	}
	sort.Slice(repos, func(i, j int) bool { return repos[i].used.Before(repos[j].used) })
	for _, r := range repos {
		if total <= c.limit {
			break
		}
		if c.remove(r) {
			total -= r.bytes
		}
	}
	if total > c.limit {
		c.log.Warn("the repository cache holds more than its limit: the rest are the repositories the windows show",
			zap.String("dir", c.dir), zap.String("holds", mib(total)), zap.String("limit", mib(c.limit)))
	}
}

// remove takes r out of the cache unless a window shows it or it is being
// fetched: renamed aside under its exclusive lock, then deleted.
func (c *RepoCache) remove(r cached) bool {
	l := flock.New(c.lockPath(r.object))
	if ok, err := l.TryLock(); err != nil || !ok {
		return false
	}
	defer func() { _ = l.Unlock() }()
	if !lockedCurrent(l) {
		return false // another process removed it meanwhile
	}
	aside := filepath.Join(c.dir, ".remove-"+r.object+"-"+rand.Text()[:8])
	if err := os.Rename(filepath.Join(c.dir, r.object), aside); err != nil {
		c.log.Warn("remove a repository from the cache", zap.String("object", r.object), zap.Error(err))
		return false
	}
	_ = os.Remove(l.Path())
	if err := os.RemoveAll(aside); err != nil {
		c.log.Warn("remove a repository from the cache", zap.String("object", r.object), zap.Error(err))
	}
	c.log.Info("removed a repository from the cache, least recently used", zap.String("object", r.object),
		zap.Int64("bytes", r.bytes), zap.Time("last_used", r.used))
	return true
}

// removeOrphanLock deletes a repository's lock file when the cache holds
// no such repository and no one holds the lock (a fetch that failed, or a
// removal killed midway, left it).
func (c *RepoCache) removeOrphanLock(object string) {
	l := flock.New(c.lockPath(object))
	if ok, err := l.TryLock(); err != nil || !ok {
		return
	}
	defer func() { _ = l.Unlock() }()
	if _, err := os.Stat(filepath.Join(c.dir, object)); errors.Is(err, fs.ErrNotExist) && lockedCurrent(l) {
		_ = os.Remove(l.Path())
	}
}

// lockFile takes the lock on the file at path, shared or exclusive,
// waiting for it until ctx ends. A lock file is deleted under its
// exclusive lock, so a lock taken on a file no longer at path is let go
// and taken on the file there now.
func lockFile(ctx context.Context, path string, shared bool) (*flock.Flock, error) {
	for {
		l := flock.New(path)
		lock := l.TryLockContext
		if shared {
			lock = l.TryRLockContext
		}
		if _, err := lock(ctx, lockRetry); err != nil {
			return nil, err
		}
		if lockedCurrent(l) {
			return l, nil
		}
		_ = l.Unlock()
	}
}

// lockedCurrent reports whether the file l holds locked is still the one
// at its path.
func lockedCurrent(l *flock.Flock) bool {
	held, err := l.Stat()
	if err != nil {
		return false
	}
	at, err := os.Stat(l.Path())
	return err == nil && os.SameFile(held, at)
}

// mib says n bytes in MiB, to a tenth.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// treeBytes is the size of the regular files under dir.
func treeBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
