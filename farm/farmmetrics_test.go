package farm

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

// The farm's metrics show its queue and each worker as their health
// reports say, read at each scrape.
func TestStatusMetrics(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	cs := configs(4)
	if _, err := r.q.Enqueue(context.Background(), "run1", cs, 3, nil); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	stop := r.runWorker(t, WorkerConfig{ID: "w1", Slots: 2}, funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		if slot == 0 {
			<-release
		}
		return Outcome{Dialogue: okDialogue(c)}, nil
	}), zaptest.NewLogger(t))
	defer stop()
	defer close(release)
	srv := httptest.NewServer(StatusHandler(r.q.js))
	defer srv.Close()
	scrape := func() string {
		t.Helper()
		res, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("scrape: %s\n%s", res.Status, body)
		}
		return string(body)
	}
	value := func(text, series string) (float64, bool) {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(m[1], 64)
		return v, err == nil
	}
	// Slot 1 drives the other three; slot 0 holds one until released,
	// and the worker's health (every 5 s) says so.
	host, _ := os.Hostname()
	var text string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		text = scrape()
		ok, _ := value(text, `dialogfarm_farm_worker_dialogues_total{host="`+host+`",key="`+Anonymous+`",status="ok",worker="w1"}`)
		busy, _ := value(text, `dialogfarm_farm_simulators{state="busy"}`)
		if ok == 3 && busy == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metrics never showed 3 ok and 1 busy simulator:\n%s", text)
		}
	}
	for series, want := range map[string]float64{
		`dialogfarm_farm_jobs{state="waiting"}`:            0,
		`dialogfarm_farm_jobs{state="in_flight"}`:          1,
		`dialogfarm_farm_outcomes_waiting{kind="results"}`: 3,
		`dialogfarm_farm_workers{state="healthy"}`:         1,
		`dialogfarm_farm_workers{state="silent"}`:          0,
		`dialogfarm_farm_simulators{state="idle"}`:         1,
	} {
		if got, ok := value(text, series); !ok || got != want {
			t.Errorf("%s = %v (found %v), want %v", series, got, ok, want)
		}
	}
	if !strings.Contains(text, `dialogfarm_farm_worker_report_age_seconds{host=`) {
		t.Errorf("no report age:\n%s", text)
	}
}

// The farm's status says what it holds of each run: the operator of a
// farm several runs share sees whose jobs wait.
func TestStatusByRun(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	ctx := context.Background()
	if _, err := r.q.Enqueue(ctx, "run1", configs(4), 3, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.q.Enqueue(ctx, "run2", configs(2), 3, nil); err != nil {
		t.Fatal(err)
	}
	// Two results of one config of run2 (two workers drove it) count once.
	for _, user := range []string{"UA", "UB"} {
		if _, err := r.q.js.Publish(ctx, resultSubject("run2", "cfg-001", user), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	st, err := ReadStatus(ctx, r.q.js, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []RunStatus{{Run: "run1", Jobs: 4}, {Run: "run2", Jobs: 2, Results: 1}}
	if len(st.Runs) != len(want) || st.Runs[0] != want[0] || st.Runs[1] != want[1] {
		t.Errorf("runs %+v, want %+v", st.Runs, want)
	}
	if text := st.Text(time.Now()); !strings.Contains(text, "run run2: 2 jobs waiting or in flight; 1 results and 0 dead letters not collected yet\n") {
		t.Errorf("status says\n%s", text)
	}
	if one, err := ReadStatus(ctx, r.q.js, "run1"); err != nil || len(one.Runs) != 0 || one.Queued != 4 {
		t.Errorf("run1's status: %+v %v", one, err)
	}
	checkFarmMetrics(t, r, `dialogfarm_farm_run_jobs{run="run1"} 4`, `dialogfarm_farm_run_jobs{run="run2"} 2`,
		`dialogfarm_farm_run_outcomes_waiting{kind="results",run="run2"} 1`, `dialogfarm_farm_run_outcomes_waiting{kind="dead",run="run1"} 0`)
}

// checkFarmMetrics scrapes the farm's metrics once and checks that each
// of series ("name{labels} value") is among them.
func checkFarmMetrics(t *testing.T, r *rig, series ...string) {
	t.Helper()
	body := scrapeFarmMetrics(t, r.q.js)
	for _, s := range series {
		if !strings.Contains(string(body), "\n"+s+"\n") {
			t.Errorf("the metrics lack %s:\n%s", s, body)
		}
	}
}

// scrapeFarmMetrics is what farm serve --metrics-addr serves of js once.
func scrapeFarmMetrics(t *testing.T, js jetstream.JetStream) []byte {
	t.Helper()
	srv := httptest.NewServer(StatusHandler(js))
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body
}
