package farm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

func writeTree(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}

// Two workers that cannot see the coordinator's folder drive a run: the
// repository goes through the farm's object store once per worker (the
// coordinator's copy is gone before they start), each worker drives in
// its own cached copy, failure artifacts come back into the coordinator's
// folder, and every config has exactly one ok record, which names the
// coordinator's path. The workers have least privilege.
func TestWorkersWithoutTheRunFolder(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "coordinator", "workspace", "sample")
	writeTree(t, repo, map[string]string{"calc.py": "def add(a, b):\n    return a + b\n", "pkg/util.go": "package pkg\n"})
	refs, err := r.q.ShipRepos(ctx, []string{repo, repo}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	// Shipping the same content again sends nothing new.
	lastSeq := func() uint64 {
		s, err := r.cjs.Stream(ctx, "OBJ_"+ReposBucket)
		if err != nil {
			t.Fatal(err)
		}
		return s.CachedInfo().State.LastSeq
	}
	before := lastSeq()
	if _, err := r.q.ShipRepos(ctx, []string{repo}, zaptest.NewLogger(t)); err != nil {
		t.Fatal(err)
	}
	if after := lastSeq(); after != before {
		t.Errorf("shipping the same repository again wrote %d messages", after-before)
	}
	// The coordinator's folder is gone: a worker reading it would fail.
	if err := os.Rename(filepath.Join(tmp, "coordinator"), filepath.Join(tmp, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	cs := configs(8)
	for i := range cs {
		cs[i].Repo, cs[i].File = repo, "calc.py"
	}
	if _, err := r.q.Enqueue(ctx, "run", cs, 3, nil, WithRepos(refs)); err != nil {
		t.Fatal(err)
	}
	var tries sync.Map
	caches := []*RepoCache{}
	var wg sync.WaitGroup
	wctx, stop := context.WithCancel(ctx)
	defer func() { stop(); wg.Wait() }()
	for i, wq := range r.workerQueues {
		home := filepath.Join(tmp, fmt.Sprintf("worker%d", i+1))
		cache := NewRepoCache(filepath.Join(home, "repos"), 0, wq, zaptest.NewLogger(t))
		caches = append(caches, cache)
		drv := funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
			d := okDialogue(c)
			src, err := os.ReadFile(filepath.Join(c.Repo, c.File))
			if err != nil || !strings.Contains(string(src), "def add") || !strings.HasPrefix(c.Repo, home) || filepath.Base(c.Repo) != "sample" {
				d.Status, d.FailedStep, d.Error = dialog.StatusFailed, "open_file", fmt.Sprintf("%s: %v", c.Repo, err)
				return Outcome{Dialogue: d}, nil
			}
			n, _ := tries.LoadOrStore(c.ID, new(atomic.Int32))
			if c.ID == "cfg-003" && n.(*atomic.Int32).Add(1) == 1 { // fails once, with artifacts
				dir := filepath.Join(home, "failures", c.ID)
				writeTree(t, dir, map[string]string{"screenshot.png": "PNG of " + c.ID, "steps.json": `{"failed_step":"turn1_answer"}`})
				d.Status, d.FailedStep, d.Error, d.Artifacts = dialog.StatusFailed, "turn1_answer", "timed out", dir
				return Outcome{Dialogue: d, Retry: true}, nil
			}
			time.Sleep(20 * time.Millisecond) // both workers get some
			return Outcome{Dialogue: d}, nil
		})
		w := NewWorker(WorkerConfig{ID: fmt.Sprintf("w%d", i+1), Slots: 2, FetchWait: 200 * time.Millisecond,
			Backoff: []time.Duration{10 * time.Millisecond}, Repos: cache, SendFiles: true}, wq, drv, nil, zaptest.NewLogger(t))
		wg.Go(func() { _ = w.Run(wctx) })
	}
	recs := newMemRecords()
	var attempts []Attempt
	out := filepath.Join(tmp, "elsewhere", "run")
	prog, err := r.q.Collect(ctx, CollectConfig{Run: "run", Want: ids(cs), Records: recs, FilesDir: filepath.Join(out, "failures"),
		Attempts: func(v any) error { attempts = append(attempts, v.(Attempt)); return nil }}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("collect: %v (%+v)", err, prog)
	}
	if prog.OK != len(cs) {
		t.Errorf("progress %+v: want %d ok", prog, len(cs))
	}
	for _, c := range cs {
		if recs.appends[c.ID] != 1 || recs.status[c.ID] != "ok:" {
			t.Errorf("%s: %d records, %s", c.ID, recs.appends[c.ID], recs.status[c.ID])
		}
	}
	fetched := 0
	for i, c := range caches {
		if c.Fetched() > 1 {
			t.Errorf("worker %d fetched the repository %d times", i+1, c.Fetched())
		}
		fetched += c.Fetched()
	}
	if fetched == 0 {
		t.Error("no worker fetched the repository")
	}
	if len(attempts) != 1 {
		t.Fatalf("%d attempts, want cfg-003's", len(attempts))
	}
	a := attempts[0].Dialogue
	if want := filepath.Join(out, "failures", "cfg-003"); a.Artifacts != want || a.Config.Repo != repo {
		t.Errorf("the attempt's artifacts at %q (want %q), its repo %q (want the coordinator's %q)", a.Artifacts, want, a.Config.Repo, repo)
	}
	if png, err := os.ReadFile(filepath.Join(out, "failures", "cfg-003", "screenshot.png")); err != nil || string(png) != "PNG of cfg-003" {
		t.Errorf("the screenshot in the run folder: %q, %v", png, err)
	}
	// The worker's own copy went once sent back.
	for i := range r.workerQueues {
		if _, err := os.Stat(filepath.Join(tmp, fmt.Sprintf("worker%d", i+1), "failures", "cfg-003")); err == nil {
			t.Errorf("worker %d keeps the artifacts it sent back", i+1)
		}
	}
	// The files were deleted once collected; the repository is stored once.
	for bucket, want := range map[string]int{FilesBucket: 0, ReposBucket: 1} {
		obs, err := r.cjs.ObjectStore(ctx, bucket)
		if err != nil {
			t.Fatal(err)
		}
		infos, err := obs.List(ctx)
		if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
			t.Fatal(err)
		}
		if len(infos) != want {
			t.Errorf("%s holds %d objects, want %d", bucket, len(infos), want)
		}
	}
}

// A repository's tar.gz is the same bytes for the same content, and
// unpacking refuses what would leave the folder or is not a folder or a
// regular file.
func TestRepoPackingIsSafe(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	files := map[string]string{"x.py": "x = 1\n", "sub/y.go": "package sub\n"}
	writeTree(t, a, files)
	writeTree(t, b, files)
	if err := os.Chtimes(filepath.Join(b, "x.py"), time.Unix(1, 0), time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	var pa, pb bytes.Buffer
	if err := packRepo(context.Background(), a, &pa); err != nil {
		t.Fatal(err)
	}
	if err := packRepo(context.Background(), b, &pb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pa.Bytes(), pb.Bytes()) {
		t.Error("the same content packed to different bytes")
	}
	n, err := unpack(bytes.NewReader(pa.Bytes()), t.TempDir())
	if err != nil || n != 2 {
		t.Errorf("unpack: %d files, %v", n, err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(a, "link")); err != nil {
		t.Fatal(err)
	}
	if err := packRepo(context.Background(), a, &bytes.Buffer{}); err == nil {
		t.Error("a symbolic link was packed")
	}
	evil := func(hdrs ...*tar.Header) []byte {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for _, h := range hdrs {
			_ = tw.WriteHeader(h)
			if h.Size > 0 {
				_, _ = tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
			}
		}
		_ = tw.Close()
		_ = gz.Close()
		return buf.Bytes()
	}
	for name, data := range map[string][]byte{
		"dot-dot":  evil(&tar.Header{Name: "../escaped", Typeflag: tar.TypeReg, Size: 1, Mode: 0o600}),
		"absolute": evil(&tar.Header{Name: "/tmp/escaped", Typeflag: tar.TypeReg, Size: 1, Mode: 0o600}),
		"symlink":  evil(&tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc", Mode: 0o777}),
		"dot-dot inside": evil(&tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o700},
			&tar.Header{Name: "d/../../escaped", Typeflag: tar.TypeReg, Size: 1, Mode: 0o600}),
	} {
		out := t.TempDir()
		if _, err := unpack(bytes.NewReader(data), out); err == nil {
			t.Errorf("%s: unpacked", name)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(out), "escaped")); err == nil {
			t.Errorf("%s: a file was written outside the folder", name)
		}
	}
}

// A file sent back is taken only with the content its (sealed) result
// names: another worker that overwrites the object under the same name
// does not get its content into the run folder.
func TestAReplacedFileIsNotTaken(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"genuine/screenshot.png": "genuine", "forged/screenshot.png": "forged"})
	refs, err := r.workerQueues[0].sendFiles(ctx, "run", "cfg", 1, filepath.Join(dir, "genuine"))
	if err != nil || len(refs) != 1 {
		t.Fatalf("send: %v, %v", refs, err)
	}
	if _, err := r.workerQueues[1].putFile(ctx, refs[0].Object, filepath.Join(dir, "forged", "screenshot.png")); err != nil {
		t.Fatalf("the second worker overwriting the object: %v", err)
	}
	out := filepath.Join(dir, "run", "failures", "cfg")
	if err := r.q.fetchFiles(ctx, refs, out); err == nil || !strings.Contains(err.Error(), "not what the result names") {
		t.Errorf("fetching a replaced file: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(out, "screenshot.png")); err == nil {
		t.Errorf("the replaced file was written: %q", data)
	}
}
