package farm

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/procfs"
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
	var prevBusy, prevTotal float64
	fs, fsErr := procfs.NewDefaultFS()
	return func() (Usage, error) {
		var u Usage
		if fsErr != nil {
			return u, fmt.Errorf("open /proc: %w", fsErr)
		}
		st, err := fs.Stat()
		if err != nil {
			return u, fmt.Errorf("read /proc/stat: %w", err)
		}
		// Guest time is in user and nice already.
		c := st.CPUTotal
		total := c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
		busy := total - c.Idle - c.Iowait
		if total > prevTotal {
			u.CPUBusy = (busy - prevBusy) / (total - prevTotal)
		}
		prevBusy, prevTotal = busy, total
		u.MemAvailable, err = readMemAvailable(fs)
		return u, err
	}
}

// readMemAvailable is MemAvailable from /proc/meminfo, in bytes.
func readMemAvailable(fs procfs.FS) (uint64, error) {
	mi, err := fs.Meminfo()
	if err != nil {
		return 0, fmt.Errorf("read /proc/meminfo: %w", err)
	}
	if mi.MemAvailableBytes == nil {
		return 0, fmt.Errorf("/proc/meminfo: no MemAvailable line")
	}
	return *mi.MemAvailableBytes, nil
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

// maxAutoSessions is the most simulators --sessions auto opens: the
// ceiling of --sessions itself (cmd/dialogfarm/ranges.go).
const maxAutoSessions = 64

// AutoSessions is how many simulators to open on this machine for
// `--sessions auto`: as many as available memory holds (see
// firstSimulatorMemory), at least 1 and at most maxAutoSessions; two per
// core when memory cannot be read. It is not bounded by the cores: how
// many dialogues run at once is the Budget's to decide, dialogue by
// dialogue, from the machine's CPU and memory, so a slow model (most of
// a dialogue spent waiting, which costs a window almost nothing) fills
// more windows than a fast one. A slot's window loads the workbench
// only when the Budget first admits a dialogue on it.
func AutoSessions(cores int) int {
	fs, err := procfs.NewDefaultFS()
	var mem uint64
	if err == nil {
		mem, err = readMemAvailable(fs)
	}
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
		n = 1
		if mem > firstSimulatorMemory {
			n += int((mem - firstSimulatorMemory) / extraSimulatorMemory)
		}
	}
	return max(1, min(n, maxAutoSessions))
}
