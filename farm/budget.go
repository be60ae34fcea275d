package farm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Usage is a reading of the machine: how busy its CPUs were since the last
// reading and how much memory is available.
type Usage struct {
	// CPUBusy is the fraction of all cores' time spent busy, 0..1.
	CPUBusy float64
	// MemAvailable is MemAvailable from /proc/meminfo, in bytes.
	MemAvailable uint64
}

// Budget admits dialogues while the machine has CPU and memory to spare,
// so that more simulators never make every simulator slow (a step that
// times out under load fails a config). One dialogue is always admitted,
// so a run makes progress on a machine that is busy with other work.
type Budget struct {
	// Max bounds dialogues at once (the windows that are open).
	Max int
	// MaxCPU is the CPU busy fraction above which no further dialogue
	// starts (default 0.9).
	MaxCPU float64
	// MinMemory is the available memory below which no further dialogue
	// starts (default 768 MiB).
	MinMemory uint64
	// Every is how often a waiting slot reads the machine again.
	Every time.Duration

	read func() (Usage, error)

	mu    sync.Mutex
	busy  int
	last  Usage
	at    time.Time // of the last reading or admission
	fresh bool      // last was read after the last admission
}

// NewBudget returns a budget of up to max dialogues that reads /proc.
func NewBudget(max int) *Budget {
	return &Budget{Max: max, MaxCPU: 0.9, MinMemory: 768 << 20, Every: time.Second, read: newProcReader()}
}

// Acquire waits until another dialogue may start, or ctx ends.
func (b *Budget) Acquire(ctx context.Context) error {
	t := time.NewTicker(b.Every)
	defer t.Stop()
	for {
		if b.tryAcquire() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Release ends an admitted dialogue.
func (b *Budget) Release() {
	b.mu.Lock()
	b.busy--
	b.mu.Unlock()
}

// Busy is how many dialogues are admitted now.
func (b *Budget) Busy() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.busy
}

func (b *Budget) tryAcquire() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.busy == 0 {
		b.busy++
		return true
	}
	if b.busy >= b.Max {
		return false
	}
	// At most one admission per Every beyond the first dialogue, each on
	// a reading taken after the previous admission: loads are staggered
	// and every decision sees the dialogues already admitted.
	if time.Since(b.at) >= b.Every {
		u, err := b.read()
		if err != nil {
			return false
		}
		b.last, b.at, b.fresh = u, time.Now(), true
	}
	if !b.fresh || b.last.CPUBusy > b.MaxCPU || b.last.MemAvailable < b.MinMemory {
		return false
	}
	b.busy++
	b.at, b.fresh = time.Now(), false
	return true
}

// newProcReader reads /proc/stat (CPU busy since the previous call) and
// /proc/meminfo.
func newProcReader() func() (Usage, error) {
	var prevBusy, prevTotal uint64
	return func() (Usage, error) {
		var u Usage
		busy, total, err := readProcStat()
		if err != nil {
			return u, err
		}
		if total > prevTotal {
			u.CPUBusy = float64(busy-prevBusy) / float64(total-prevTotal)
		}
		prevBusy, prevTotal = busy, total
		u.MemAvailable, err = readMemAvailable()
		return u, err
	}
}

func readProcStat() (busy, total uint64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("read /proc/stat: %w", err)
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: field %d: %w", i+1, err)
		}
		total += v
		if i != 3 && i != 4 { // idle and iowait
			busy += v
		}
	}
	return busy, total, nil
}

func readMemAvailable() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("read /proc/meminfo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo MemAvailable: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/meminfo: no MemAvailable line")
}

// The memory a simulator takes, for AutoSessions: the first one brings
// code-server and Chromium (editorbench, 1 window: peak RSS 505-526 MiB
// code-server + 1016-1120 MiB Chromium), each further one a window in the
// shared renderer and an extension host (peak RSS 4 windows minus 1, over
// 3: 403-439 MiB in make bench-farm and editorbench runs). Both have room
// for a window's heap to grow over a long run.
const (
	firstSimulatorMemory = 1800 << 20
	extraSimulatorMemory = 640 << 20
)

// AutoSessions is how many simulators to open on this machine for
// `--sessions auto`: two per core, as many as available memory holds (see
// firstSimulatorMemory), at least 1 and at most 8.
func AutoSessions(cores int) int {
	mem, err := readMemAvailable()
	if err != nil {
		return autoSessions(cores, 0, false)
	}
	return autoSessions(cores, mem, true)
}

// autoSessions is AutoSessions for a machine with cores and mem bytes of
// available memory (known says whether it was read).
func autoSessions(cores int, mem uint64, known bool) int {
	n := 2 * cores
	if known {
		fit := 1
		if mem > firstSimulatorMemory {
			fit += int((mem - firstSimulatorMemory) / extraSimulatorMemory)
		}
		n = min(n, fit)
	}
	return max(1, min(n, 8))
}
