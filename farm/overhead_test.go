package farm

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"dialogfarm/dialog"
)

func TestJobsAreJSON(t *testing.T) {
	// The job on the wire is a plain JSON document, so operators can read
	// it with the nats CLI.
	data, _ := json.Marshal(Job{Run: "r", Config: dialog.ChatConfig{ID: "a"}, MaxAttempts: 2})
	var back map[string]any
	if err := json.Unmarshal(data, &back); err != nil || back["run"] != "r" || back["max_attempts"].(float64) != 2 {
		t.Fatalf("job JSON %s", data)
	}
	if token("a.b") == "a.b" || token("a-b_1") != "a-b_1" {
		t.Errorf("token: %q %q", token("a.b"), token("a-b_1"))
	}
}

// BenchmarkJobOverhead is the queue's own cost per job: enqueue, pull,
// heartbeat-free drive (instant), publish a 20 KB result, collect, ack.
// It reports the wall time per job and the CPU time per job of this
// process (the embedded NATS server, the worker and the collector), the
// queue's share of a dialogue's CPU budget; `make bench-farm` prints both
// against that budget.
func BenchmarkJobOverhead(b *testing.B) {
	r := startRig(b, b.TempDir(), DefaultQueueConfig())
	answer := string(make([]byte, 20<<10))
	drv := funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		d := okDialogue(c)
		d.Turns = []dialog.Turn{{Query: "q", Shown: answer}}
		return Outcome{Dialogue: d}, nil
	})
	cs := make([]dialog.ChatConfig, b.N)
	for i := range cs {
		cs[i] = dialog.ChatConfig{ID: fmt.Sprintf("b%d", i)}
	}
	stop := r.runWorkers(b, 1, 4, drv, zap.NewNop())
	defer stop()
	b.ResetTimer()
	cpu0 := processCPU(b)
	if _, err := r.q.Enqueue(context.Background(), "bench", cs, 1, nil); err != nil {
		b.Fatal(err)
	}
	prog, err := r.q.Collect(context.Background(), CollectConfig{Run: "bench", Want: ids(cs), Records: newMemRecords()}, zap.NewNop())
	if err != nil || prog.OK != b.N {
		b.Fatalf("%+v %v", prog, err)
	}
	cpu := processCPU(b) - cpu0
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/job")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/job")
}

// processCPU is the user + system CPU time this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestWorkerStopsWhenItsDriverCannotDrive: a driver error that wraps
// ErrCannotDrive (a plugin that fails to activate) stops the worker with
// that error at once, and the job goes back to the queue for a worker
// that can drive it: recorded once, by that one.
