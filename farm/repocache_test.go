package farm

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sync/errgroup"
)

// shipKiB puts repositories of about kib KiB each (random, so gzip keeps
// their size) in the farm and returns their refs, in the order of names.
func shipKiB(t *testing.T, r *rig, kib int, names ...string) []RepoRef {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var dirs []string
	for _, n := range names {
		dir := filepath.Join(t.TempDir(), n)
		writeTree(t, dir, map[string]string{"main.py": "def " + n + "(): pass\n"})
		buf := make([]byte, kib<<10)
		_, _ = rand.Read(buf)
		if err := os.WriteFile(filepath.Join(dir, "data.bin"), buf, 0o600); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	refs, err := r.q.ShipRepos(ctx, dirs, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []RepoRef
	for _, d := range dirs {
		out = append(out, refs[d])
	}
	return out
}

func cachedObjects(t *testing.T, dir string) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.IsDir() && repoObject.MatchString(e.Name()) {
			got[e.Name()] = true
		}
	}
	return got
}

// With a limit, a worker's cache removes the least recently used
// repository that no window shows; what a window shows stays, even
// beyond the limit, and a removed repository is fetched again when a job
// names it.
func TestRepoCacheRemovesWhatNoWindowShows(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	refs := shipKiB(t, r, 300, "alpha", "beta", "gamma")
	a, b, g := refs[0], refs[1], refs[2]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "repos")
	c := NewRepoCache(dir, 700<<10, r.q, zaptest.NewLogger(t)) // two fit, not three
	path := func(slot int, ref RepoRef) {
		t.Helper()
		p, err := c.Path(ctx, slot, ref)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(p, "main.py")); err != nil {
			t.Fatalf("slot %d's copy of %s: %v", slot, ref.Name, err)
		}
	}
	has := func(want ...RepoRef) {
		t.Helper()
		got := cachedObjects(t, dir)
		if len(got) != len(want) {
			t.Errorf("the cache holds %d repositories, want %d", len(got), len(want))
		}
		for _, w := range want {
			if !got[w.Object] {
				t.Errorf("%s is not in the cache", w.Name)
			}
		}
	}
	path(0, a)
	path(0, b)
	path(0, g) // alpha and beta are left; alpha, used less recently, goes
	has(b, g)
	path(1, a) // fetched again; beta, which no window shows, goes
	has(g, a)
	if c.Fetched() != 4 {
		t.Errorf("%d fetches, want 4", c.Fetched())
	}
	onlyLocksOf(t, dir, g, a)
	// A lock file that a failed fetch left, which no one holds, goes at
	// the next trim; one a slot holds stays.
	for _, orphan := range []string{"sha256-" + strings.Repeat("0", 64), "sha256-" + strings.Repeat("1", 64)} {
		if err := os.WriteFile(filepath.Join(dir, orphan+".lock"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	held := RepoRef{Object: "sha256-" + strings.Repeat("1", 64), Name: "held"}
	if err := c.hold(ctx, 2, held.Object); err != nil {
		t.Fatal(err)
	}
	c.Trim()
	onlyLocksOf(t, dir, g, a, held)
	c.drop(2)
	// Beyond the limit, what windows show stays.
	small := NewRepoCache(filepath.Join(t.TempDir(), "repos"), 1, r.q, zaptest.NewLogger(t))
	for slot, ref := range refs {
		if _, err := small.Path(ctx, slot, ref); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(cachedObjects(t, small.dir)); n != 3 {
		t.Errorf("a cache over its limit kept %d of the 3 repositories its windows show", n)
	}
	small.Release()
	small.Trim()
	if n := len(cachedObjects(t, small.dir)); n != 0 {
		t.Errorf("released, %d repositories stay over the limit", n)
	}
}

// onlyLocksOf checks that dir holds a lock file for each of want and no
// other file: none for repositories removed, nor of fetches done.
func onlyLocksOf(t *testing.T, dir string, want ...RepoRef) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.Object+".lock"] = true
	}
	for _, e := range es {
		if e.IsDir() {
			continue
		}
		if !wanted[e.Name()] {
			t.Errorf("the cache folder keeps %s", e.Name())
		}
		delete(wanted, e.Name())
	}
	for name := range wanted {
		t.Errorf("the cache folder lacks %s", name)
	}
}

// Two worker processes on one cache folder: one does not remove what the
// other's window shows, and what a killed fetch or removal left goes.
func TestRepoCacheSharedFolder(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	refs := shipKiB(t, r, 300, "alpha", "beta")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "repos")
	one := NewRepoCache(dir, 400<<10, r.q, zaptest.NewLogger(t))
	other := NewRepoCache(dir, 400<<10, r.q, zaptest.NewLogger(t))
	if _, err := other.Path(ctx, 0, refs[0]); err != nil {
		t.Fatal(err)
	}
	// Left by a process killed midway.
	writeTree(t, filepath.Join(dir, refs[1].Object, ".fetch-123"), map[string]string{"half.py": "def"})
	writeTree(t, filepath.Join(dir, ".remove-x"), map[string]string{"gone.py": "def"})
	if _, err := one.Path(ctx, 0, refs[1]); err != nil {
		t.Fatal(err)
	}
	if one.Fetched() != 1 {
		t.Errorf("the second process fetched %d repositories, want 1", one.Fetched())
	}
	got := cachedObjects(t, dir)
	if !got[refs[0].Object] || !got[refs[1].Object] {
		t.Errorf("over the limit, the cache holds %v: want both, as windows show them", got)
	}
	for _, left := range []string{filepath.Join(dir, refs[1].Object, ".fetch-123"), filepath.Join(dir, ".remove-x")} {
		if _, err := os.Stat(left); err == nil {
			t.Errorf("%s is still there", left)
		}
	}
	// The same content under another name is fetched beside it, not
	// waited for.
	twin := refs[0]
	twin.Name = "alpha-copy"
	p, err := one.Path(ctx, 1, twin)
	if err != nil || filepath.Base(p) != "alpha-copy" {
		t.Fatalf("the twin at %q: %v", p, err)
	}
	// Once no window shows alpha, it goes at the next trim.
	other.Release()
	if _, err := one.Path(ctx, 1, refs[1]); err != nil {
		t.Fatal(err)
	}
	one.Trim()
	got = cachedObjects(t, dir)
	if got[refs[0].Object] || !got[refs[1].Object] {
		t.Errorf("after release the cache holds %v: want beta only", got)
	}
	onlyLocksOf(t, dir, refs[1])
}

// The farm keeps a repository RepoMaxAge after it was last sent: a run
// sends a copy again when it is older than a quarter of that, and one no
// run sends again goes.
func TestReposExpireUnlessSentAgain(t *testing.T) {
	qc := DefaultQueueConfig()
	qc.RepoMaxAge = 2 * time.Second
	r := startRig(t, t.TempDir(), qc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "alpha")
	writeTree(t, dir, map[string]string{"main.py": "def alpha(): pass\n"})
	ship := func() RepoRef {
		t.Helper()
		refs, err := r.q.ShipRepos(ctx, []string{dir}, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		return refs[dir]
	}
	obs, err := r.q.objectStore(ctx, ReposBucket)
	if err != nil {
		t.Fatal(err)
	}
	modTime := func(ref RepoRef) (time.Time, bool) {
		info, err := obs.GetInfo(ctx, ref.Object)
		if err != nil {
			return time.Time{}, false
		}
		return info.ModTime, true
	}
	ref := ship()
	first, ok := modTime(ref)
	if !ok {
		t.Fatal("the repository is not in the bucket")
	}
	if ship(); !mustModTime(t, modTime, ref).Equal(first) {
		t.Error("a fresh copy was sent again")
	}
	for time.Since(first) < qc.RepoMaxAge/4+100*time.Millisecond {
		time.Sleep(50 * time.Millisecond)
	}
	ship()
	again := mustModTime(t, modTime, ref)
	if !again.After(first) {
		t.Errorf("a copy %s old was not sent again", time.Since(first))
	}
	for {
		if _, ok := modTime(ref); !ok {
			break
		}
		if time.Since(again) > qc.RepoMaxAge+10*time.Second {
			t.Fatalf("the repository is still in the bucket %s after it was sent", time.Since(again))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if gone := time.Since(again); gone < qc.RepoMaxAge {
		t.Errorf("the repository went %s after it was sent, before its %s", gone, qc.RepoMaxAge)
	}
}

func mustModTime(t *testing.T, modTime func(RepoRef) (time.Time, bool), ref RepoRef) time.Time {
	t.Helper()
	mt, ok := modTime(ref)
	if !ok {
		t.Fatal("the repository is not in the bucket")
	}
	return mt
}

// Slots of two processes on one folder, each moving between repositories
// while the cache removes any it can: what Path returns is there until
// the slot asks for another, though lock files come and go meanwhile.
func TestRepoCacheLocksUnderChurn(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	refs := shipKiB(t, r, 8, "alpha", "beta", "gamma")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "repos")
	var g errgroup.Group
	for proc := range 2 {
		c := NewRepoCache(dir, 1, r.q, zap.NewNop()) // removes all it may
		for slot := range 2 {
			g.Go(func() error {
				for i := range 40 {
					ref := refs[(i+slot+proc)%len(refs)]
					p, err := c.Path(ctx, slot, ref)
					if err != nil {
						return err
					}
					c.Trim()
					if _, err := os.Stat(filepath.Join(p, "main.py")); err != nil {
						return fmt.Errorf("process %d slot %d, job %d: the copy of %s it holds: %w", proc, slot, i, ref.Name, err)
					}
				}
				c.drop(slot)
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	NewRepoCache(dir, 1, r.q, zap.NewNop()).Trim()
	onlyLocksOf(t, dir)
}

// A run longer than RepoMaxAge keeps its repositories on the farm: it
// sends each again before the bucket's TTL takes it.
func TestRunKeepsItsReposFresh(t *testing.T) {
	qc := DefaultQueueConfig()
	qc.RepoMaxAge = 2 * time.Second
	r := startRig(t, t.TempDir(), qc)
	dir := filepath.Join(t.TempDir(), "alpha")
	writeTree(t, dir, map[string]string{"main.py": "def alpha(): pass\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	refs, err := r.q.ShipRepos(ctx, []string{dir}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { r.q.KeepReposFresh(run, []string{dir}, zaptest.NewLogger(t)); close(done) }()
	defer func() { stop(); <-done }()
	obs, err := r.q.objectStore(ctx, ReposBucket)
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	for time.Since(sent) < 3*qc.RepoMaxAge {
		if _, err := obs.GetInfo(ctx, refs[dir].Object); err != nil {
			t.Fatalf("%s after it was first sent, during the run, the repository is gone: %v", time.Since(sent).Round(time.Millisecond), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
