package farm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// userKey makes an NKey user, writes its seed file and returns the public
// key and the seed file's path.
func userKey(tb testing.TB, dir, name string) (string, string) {
	tb.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		tb.Fatal(err)
	}
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	path := filepath.Join(dir, name+".nk")
	if err := os.WriteFile(path, seed, 0o600); err != nil {
		tb.Fatal(err)
	}
	return pub, path
}

// serveWithRoles starts a farm server on loopback that lets in one worker
// and one coordinator, and returns it with their NKey seed files; the
// server stops with the test.
func serveWithRoles(t *testing.T) (srv *Server, workerSeed, coordSeed string) {
	t.Helper()
	dir := t.TempDir()
	workerPub, workerSeed := userKey(t, dir, "worker")
	coordPub, coordSeed := userKey(t, dir, "coordinator")
	srv, err := StartServer(context.Background(), ServerConfig{StoreDir: filepath.Join(dir, "store"), Listen: "127.0.0.1:-1",
		Users: []User{{Nkey: workerPub, Role: "worker"}, {Nkey: coordPub, Role: "coordinator"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv, workerSeed, coordSeed
}

// A worker joining over the network with a worker's NKey takes part in a
// run, and cannot enqueue jobs of its own.
func TestRemoteWorkerWithLeastPrivilege(t *testing.T) {
	srv, workerSeed, coordSeed := serveWithRoles(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := Dial(ctx, ClientConfig{URL: srv.ClientURL()}); err == nil {
		t.Fatal("an anonymous client was let in")
	}
	coord, err := Dial(ctx, ClientConfig{URL: srv.ClientURL(), NkeySeed: coordSeed})
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	cjs, _ := JetStream(coord)
	q, err := Setup(ctx, cjs, DefaultQueueConfig())
	if err != nil {
		t.Fatal(err)
	}
	cs := configs(6)
	if _, err := q.Enqueue(ctx, "shared", cs, 2, nil); err != nil {
		t.Fatal(err)
	}

	var workers sync.WaitGroup
	wctx, stopWorkers := context.WithCancel(ctx)
	drivenBy := sync.Map{}
	var ws []*Worker
	for _, name := range []string{"machine-a", "machine-b"} {
		nc, err := Dial(ctx, ClientConfig{URL: srv.ClientURL(), NkeySeed: workerSeed, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, _ := JetStream(nc)
		wq, err := Open(ctx, js)
		if err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		if _, err := js.Publish(pctx, jobSubject("shared", "injected"), []byte(`{}`)); err == nil {
			t.Errorf("%s (a worker) could enqueue a job", name)
		}
		pcancel()
		ws = append(ws, NewWorker(WorkerConfig{ID: name, Slots: 1, FetchWait: 200 * time.Millisecond}, wq,
			funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
				drivenBy.Store(c.ID, name)
				time.Sleep(100 * time.Millisecond) // a dialogue takes a while
				return Outcome{Dialogue: okDialogue(c)}, nil
			}), nil, zaptest.NewLogger(t)))
	}
	for _, w := range ws {
		workers.Go(func() { _ = w.Run(wctx) })
	}
	// Midway, status counts the run's results and both workers; once
	// collected, the farm keeps none of them.
	var mid Status
	var midErr error
	prog, err := q.Collect(ctx, CollectConfig{Run: "shared", Want: ids(cs), Records: newMemRecords(),
		Progress: func(p Progress) {
			if p.Done == len(cs)/2 {
				mid, midErr = ReadStatus(ctx, cjs, "shared")
			}
		}}, zaptest.NewLogger(t))
	if err != nil || prog.OK != len(cs) {
		t.Fatalf("collect: %v, progress %+v", err, prog)
	}
	if midErr != nil || mid.Results < uint64(len(cs)/2) || len(mid.Workers) != 2 {
		t.Errorf("status midway %+v (%v): want at least %d results and 2 workers reporting", mid, midErr, len(cs)/2)
	}
	st, err := ReadStatus(ctx, cjs, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if st.Results != 0 {
		t.Errorf("status %+v: the collected run's results are still on the farm", st)
	}
	stopWorkers()
	workers.Wait()
	seen := map[string]int{}
	drivenBy.Range(func(_, v any) bool { seen[v.(string)]++; return true })
	if len(seen) != 2 {
		t.Errorf("jobs per worker %v: both machines should take part", seen)
	}
}

// A 3-node cluster on loopback with replicated streams finishes a run when
// one node stops in the middle.
func TestClusterSurvivesANodeStopping(t *testing.T) {
	if os.Getenv("DIALOGFARM_CHAOS_CLUSTER") == "" {
		// Three servers electing leaders need the machine to themselves:
		// under a parallel make test on 2 cores the election alone can
		// take a minute. make chaos runs it.
		t.Skip("set DIALOGFARM_CHAOS_CLUSTER=1 (make chaos) to run the 3-node cluster test")
	}
	dir := t.TempDir()
	ports := []int{freePort(t), freePort(t), freePort(t)}
	var nodes []*Server
	var urls []string
	for i := range 3 {
		var routes []string
		for j, p := range ports {
			if j != i {
				routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
			}
		}
		srv, err := StartServer(context.Background(), ServerConfig{Name: fmt.Sprintf("n%d", i),
			StoreDir: filepath.Join(dir, fmt.Sprint(i)), Listen: "127.0.0.1:-1", InsecureAnonymous: true,
			Cluster: fmt.Sprintf("127.0.0.1:%d", ports[i]), ClusterName: "test", Routes: routes})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown()
		nodes = append(nodes, srv)
		urls = append(urls, srv.ClientURL())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	connect := func(name string) *nats.Conn {
		nc, err := Dial(ctx, ClientConfig{URL: urls[1] + "," + urls[2] + "," + urls[0], Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	cjs, _ := JetStream(connect("coordinator"))
	qc := DefaultQueueConfig()
	qc.Replicas, qc.AckWait = 3, 2*time.Second
	q, err := Setup(ctx, cjs, qc)
	if err != nil {
		t.Fatal(err)
	}
	cs := configs(30)
	if _, err := q.Enqueue(ctx, "r", cs, 3, nil); err != nil {
		t.Fatal(err)
	}
	wjs, _ := JetStream(connect("worker"))
	wq, err := Open(ctx, wjs)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var done sync.Map
	count := 0
	var mu sync.Mutex
	w := NewWorker(WorkerConfig{ID: "w", Slots: 3, FetchWait: 300 * time.Millisecond}, wq,
		funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
			mu.Lock()
			count++
			n := count
			mu.Unlock()
			if n == 8 {
				once.Do(func() { nodes[0].Shutdown() })
			}
			done.Store(c.ID, true)
			return Outcome{Dialogue: okDialogue(c)}, nil
		}), nil, zaptest.NewLogger(t))
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(wctx) })
	recs := newMemRecords()
	var attempts []Attempt
	var dead []DeadLetter
	prog := collect(t, q, "r", ids(cs), recs, &attempts, &dead)
	stop()
	wg.Wait()
	if prog.OK != len(cs) {
		t.Fatalf("progress %+v", prog)
	}
	for _, c := range cs {
		if recs.appends[c.ID] != 1 {
			t.Errorf("%s recorded %d times", c.ID, recs.appends[c.ID])
		}
	}
}

// A server that lets only its listed users in still sets up its own
// streams over its in-process connection (farm serve --users does), and
// ":0" listens on a free port rather than NATS's default 4222.
func TestServerWithUsersConnectsInProcess(t *testing.T) {
	dir := t.TempDir()
	workerPub, _ := userKey(t, dir, "worker")
	srv, err := StartServer(context.Background(), ServerConfig{StoreDir: filepath.Join(dir, "store"), Listen: "127.0.0.1:0",
		Users: []User{{Nkey: workerPub, Role: "worker"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	if srv.ClientURL() == "nats://127.0.0.1:4222" || srv.ClientURL() == "" {
		t.Errorf("listen 127.0.0.1:0 gave %q, want a free port", srv.ClientURL())
	}
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, _ := JetStream(nc)
	if _, err := Setup(ctx, js, DefaultQueueConfig()); err != nil {
		t.Fatalf("set up the streams over the in-process connection: %v", err)
	}
	if _, err := Dial(ctx, ClientConfig{URL: srv.ClientURL()}); err == nil {
		t.Error("an anonymous client was let in over the network")
	}
}

// A call the server refuses to the user (a worker's key used to set up a
// run, or to read the farm's status) ends with the refusal, named as such,
// instead of being retried as a slow server until the caller gives up.
func TestRefusedCallsSayWhy(t *testing.T) {
	srv, workerSeed, coordSeed := serveWithRoles(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	coord, err := Dial(ctx, ClientConfig{URL: srv.ClientURL(), NkeySeed: coordSeed})
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	cjs, _ := JetStream(coord)
	if _, err := Setup(ctx, cjs, DefaultQueueConfig()); err != nil {
		t.Fatal(err)
	}
	worker, err := Dial(ctx, ClientConfig{URL: srv.ClientURL(), NkeySeed: workerSeed})
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	wjs, _ := JetStream(worker)
	_, err = Setup(ctx, wjs, DefaultQueueConfig())
	if !errors.Is(err, ErrRefused) || !errors.Is(err, nats.ErrPermissionViolation) || ctx.Err() != nil {
		t.Errorf("a worker setting up the streams: got %v (context: %v), want the refusal", err, ctx.Err())
	}
	_, err = ReadStatus(ctx, wjs, "")
	if !errors.Is(err, ErrRefused) || ctx.Err() != nil {
		t.Errorf("a worker reading the status: got %v (context: %v), want the refusal", err, ctx.Err())
	}
	// The coordinator's connection saw no refusal: its calls go on.
	if _, err := ReadStatus(ctx, cjs, ""); err != nil {
		t.Errorf("the coordinator reading the status: %v", err)
	}
	// A worker's own calls still work on the connection that was refused.
	if _, err := Open(ctx, wjs); err != nil {
		t.Errorf("the worker opening the queue after a refusal: %v", err)
	}
}

// A users list with a wrong entry is refused at start, naming the user and
// the field.
func TestUsersWithAWrongEntryAreRefused(t *testing.T) {
	dir := t.TempDir()
	pub, _ := userKey(t, dir, "worker")
	for _, tc := range []struct {
		users []User
		want  string
	}{
		{[]User{{Nkey: pub, Role: "worker"}, {Nkey: "UBLK", Role: "worker"}}, `farm user 2: field nkey: "UBLK" is not a public user NKey`},
		{[]User{{Nkey: pub, Role: "boss"}}, `farm user 1: field role: "boss": want worker or coordinator`},
	} {
		srv, err := StartServer(context.Background(), ServerConfig{StoreDir: filepath.Join(dir, "store"), Listen: "127.0.0.1:-1", Users: tc.users})
		if err == nil {
			srv.Shutdown()
			t.Errorf("users %+v: the server started", tc.users)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("users %+v: got %v, want %q", tc.users, err, tc.want)
		}
	}
	if err := (User{Nkey: pub, Role: "coordinator"}).Check(); err != nil {
		t.Errorf("a coordinator with a user key: %v", err)
	}
}
