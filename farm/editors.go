package farm

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"dialogfarm/internal/procstat"
)

// EditorPIDs returns the process group ids of the code-servers a worker's
// simulators run in (one they share, or one each) and the pid of their
// Chromium (0 for one not running); driver.Runner.PIDs is one.
type EditorPIDs func() (editors []int, browser int)

// editorCollector reads, at every scrape, the CPU time and resident memory
// of the processes a worker's simulators are made of: the code-servers'
// process groups and Chromium's process tree, by class of process. The
// simulators share them (one Chromium and its renderer processes for all
// of a worker's windows, and one code-server unless each simulator has
// its own), so what a simulator costs is the total over the number of
// simulators.
type editorCollector struct {
	cpu, rss, sims *prometheus.Desc

	mu    sync.Mutex
	pids  EditorPIDs
	n     int
	procs map[procKey]*procCPU
	// gone is the CPU ticks, by group and class, of processes that
	// exited (or took on another class), so that the counters never go
	// down when a window's extension host or a browser is replaced.
	gone map[groupClass]int64
}

// procKey tells a process from a later one given the same pid.
type procKey struct {
	pid   int
	start int64
}

// groupClass labels a series: the process group ("code-server" or
// "chromium") and the class of process in it.
type groupClass struct {
	group string
	class procstat.Class
}

// procCPU is a live process's class and its CPU ticks counted under that
// class: from base (its birth, or when it took on the class) to last.
type procCPU struct {
	groupClass
	base, last int64
}

func newEditorCollector(labels prometheus.Labels) *editorCollector {
	gc := []string{"group", "class"}
	return &editorCollector{
		cpu: prometheus.NewDesc("dialogfarm_editor_cpu_seconds_total",
			"CPU time of the processes the simulators run in (code-server's group, Chromium's tree), by class of process, since they started.", gc, labels),
		rss: prometheus.NewDesc("dialogfarm_editor_resident_memory_bytes",
			"Resident memory of the processes the simulators run in, by class of process (shared pages counted once per process).", gc, labels),
		sims: prometheus.NewDesc("dialogfarm_simulators",
			"Simulator windows this worker drives; they share the editor processes, so a simulator's CPU and memory are the editor's over this.", nil, labels),
		procs: map[procKey]*procCPU{},
		gone:  map[groupClass]int64{},
	}
}

// watch makes the collector follow the editors pids names, driven by n
// simulators.
func (c *editorCollector) watch(pids EditorPIDs, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pids, c.n = pids, n
}

func (c *editorCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.cpu
	ch <- c.rss
	ch <- c.sims
}

func (c *editorCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pids == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.sims, prometheus.GaugeValue, float64(c.n))
	editors, browser := c.pids()
	procs := procstat.Read()
	var editorPIDs []int
	for _, pgid := range editors {
		editorPIDs = append(editorPIDs, procstat.Group(procs, pgid)...)
	}
	live := map[procKey]bool{}
	rss := map[groupClass]int64{}
	for _, g := range []struct {
		name    string
		pids    []int
		browser bool
	}{{"code-server", editorPIDs, false}, {"chromium", procstat.Tree(procs, browser), true}} {
		for _, pid := range g.pids {
			p := procs[pid]
			k := procKey{pid, p.Start}
			live[k] = true
			pc, ok := c.procs[k]
			if !ok {
				pc = &procCPU{groupClass: groupClass{g.name, procstat.ClassOf(pid, g.browser)}}
				c.procs[k] = pc
			} else if !procstat.Final(pc.class, pid, p, browser) {
				// A renderer shows the zygote's command line until
				// it sets its own, a forked child its parent's until
				// it execs: what it used until then stays with the
				// class it showed.
				if cl := procstat.ClassOf(pid, g.browser); cl != pc.class {
					c.gone[pc.groupClass] += pc.last - pc.base
					pc.class, pc.base = cl, pc.last
				}
			}
			pc.last = max(pc.last, p.Ticks)
			rss[pc.groupClass] += p.RSS
		}
	}
	for k, pc := range c.procs {
		if !live[k] {
			c.gone[pc.groupClass] += pc.last - pc.base
			delete(c.procs, k)
		}
	}
	ticks := map[groupClass]int64{}
	for gc, t := range c.gone {
		ticks[gc] += t
	}
	for _, pc := range c.procs {
		ticks[pc.groupClass] += pc.last - pc.base
	}
	for gc, t := range ticks {
		ch <- prometheus.MustNewConstMetric(c.cpu, prometheus.CounterValue, float64(t)/procstat.ClockTicks, gc.group, string(gc.class))
	}
	for gc, b := range rss {
		ch <- prometheus.MustNewConstMetric(c.rss, prometheus.GaugeValue, float64(b), gc.group, string(gc.class))
	}
}
