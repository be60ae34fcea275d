package farm

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

// TestSlotsKeepTheirRepository: jobs on 4 repositories, queued in turn
// (as the coordinator queues them for 4 windows), driven by a worker of 4
// slots whose dialogues last from 10 to 90 ms, so the slots free up in no
// fixed order. Taking jobs in queue order, a slot moved to another
// repository on most jobs (a window's whole start-up again); picking from
// the jobs pulled ahead, each slot stays on its repository, and every
// config still ends with one record.
func TestSlotsKeepTheirRepository(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	const repos, perRepo = 4, 8
	var cs []dialog.ChatConfig
	for i := range perRepo {
		for k := range repos {
			cs = append(cs, dialog.ChatConfig{ID: fmt.Sprintf("r%d-%d", k, i), Repo: fmt.Sprintf("/repos/r%d", k)})
		}
	}
	var mu sync.Mutex
	shows := map[int]string{}
	loads := 0
	drv := funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		mu.Lock()
		if shows[slot] != c.Repo {
			shows[slot] = c.Repo
			loads++
		}
		mu.Unlock()
		h := fnv.New32a()
		h.Write([]byte(c.ID))
		select {
		case <-time.After(time.Duration(10+h.Sum32()%80) * time.Millisecond):
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		}
		return Outcome{Dialogue: okDialogue(c)}, nil
	})
	if _, err := r.q.Enqueue(context.Background(), "run1", cs, 3, nil); err != nil {
		t.Fatal(err)
	}
	stop := r.runWorkers(t, 1, repos, drv, zaptest.NewLogger(t))
	defer stop()
	if prog, _, _ := collectOnce(t, r.q, "run1", cs); prog.OK != len(cs) {
		t.Errorf("progress %+v, want %d ok", prog, len(cs))
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d loads over %d jobs on %d slots", loads, len(cs), repos)
	// One load per window, and a few more when a repository's jobs run
	// out before another's.
	if loads > repos+2 {
		t.Errorf("the 4 windows loaded a repository %d times over %d jobs, want at most %d", loads, len(cs), repos+2)
	}
}

// heldMsg is a job message as the lookahead holds it.
type heldMsg struct {
	jetstream.Msg
	id, repo string
}

func (m heldMsg) Data() []byte {
	return fmt.Appendf(nil, `{"config":{"id":%q,"repo":%q}}`, m.id, m.repo)
}

func holding(slots int, hold time.Duration, jobs ...heldMsg) *lookahead {
	l := newLookahead(nil, slots, time.Second, hold)
	for _, m := range jobs {
		l.held = append(l.held, heldJob{msg: m, repo: repoKey(m.Data()), since: time.Now()})
	}
	return l
}

func pickID(t *testing.T, l *lookahead, slot int, anyRepo bool) string {
	t.Helper()
	m, ok := l.pick(slot, anyRepo)
	if !ok {
		return ""
	}
	return m.(heldMsg).id
}

func TestLookaheadPick(t *testing.T) {
	a1, b1, a2 := heldMsg{id: "a1", repo: "/a"}, heldMsg{id: "b1", repo: "/b"}, heldMsg{id: "a2", repo: "/a"}

	l := holding(3, time.Minute, b1, a1)
	l.shows[0] = "/a"
	if got := pickID(t, l, 0, false); got != "a1" {
		t.Errorf("a window on /a took %q, want a1 (its repository) before the earlier b1", got)
	}
	l.shows[1] = "/c"
	if got := pickID(t, l, 1, false); got != "" {
		t.Errorf("a window on /c took %q with no job on /c held and more to pull", got)
	}
	if got := pickID(t, l, 1, true); got != "b1" {
		t.Errorf("a window on /c took %q when nothing else was left, want b1", got)
	}

	// A fresh window goes where the fewest windows are: /a has one.
	l = holding(3, time.Minute, a1, b1, a2)
	l.shows[0] = "/a"
	if got := pickID(t, l, 1, true); got != "b1" {
		t.Errorf("a fresh window took %q, want b1 (no window shows /b)", got)
	}
	if l.shows[1] != "/b" {
		t.Errorf("the window that took b1 shows %q", l.shows[1])
	}

	// A job held past the hold goes to whichever slot asks.
	l = holding(2, time.Minute, b1, a1)
	l.held[0].since = time.Now().Add(-2 * time.Minute)
	l.shows[0] = "/a"
	if got := pickID(t, l, 0, false); got != "b1" {
		t.Errorf("a window on /a took %q, want b1, held past the hold", got)
	}
}

func TestRepoKey(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{`{"config":{"repo":"/runs/x/workspace/calc"}}`, "/runs/x/workspace/calc"},
		{`{"config":{"repo":"/runs/x/workspace/calc"},"repo":{"object":"sha256-ab","name":"calc"}}`, "sha256-ab"},
		{`not json`, ""},
	} {
		if got := repoKey([]byte(c.data)); got != c.want {
			t.Errorf("repoKey(%s) = %q, want %q", c.data, got, c.want)
		}
	}
}

// TestLookaheadHoldsOneJobPerSlot: 16 slots asking at once (a fresh
// worker) hold at most one job each beyond the 16 they drive, so that the
// jobs a worker pulled ahead are not the whole queue, which a 30 s hold
// then handed out in queue order once the first dialogues ended.
func TestLookaheadHoldsOneJobPerSlot(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	const slots = 16
	var cs []dialog.ChatConfig
	for i := range 5 * slots {
		cs = append(cs, dialog.ChatConfig{ID: fmt.Sprintf("c%d", i), Repo: fmt.Sprintf("/repos/r%d", i%4)})
	}
	if _, err := r.q.Enqueue(context.Background(), "run1", cs, 3, nil); err != nil {
		t.Fatal(err)
	}
	var started sync.WaitGroup
	started.Add(slots)
	release := make(chan struct{})
	var first sync.Map
	drv := funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		if _, again := first.LoadOrStore(slot, true); !again {
			started.Done()
			select {
			case <-release:
			case <-ctx.Done():
				return Outcome{}, ctx.Err()
			}
		}
		return Outcome{Dialogue: okDialogue(c)}, nil
	})
	stop := r.runWorkers(t, 1, slots, drv, zaptest.NewLogger(t))
	defer stop()
	started.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := r.q.workers.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := info.NumAckPending; n > 2*slots {
		t.Errorf("%d jobs pulled while %d slots drive their first: want at most %d", n, slots, 2*slots)
	}
	close(release)
	if prog, _, _ := collectOnce(t, r.q, "run1", cs); prog.OK != len(cs) {
		t.Errorf("progress %+v, want %d ok", prog, len(cs))
	}
}
