// Package procstat reads what Linux's /proc says of the processes an
// editor and a browser are made of: CPU time, resident memory, parent and
// process group, and what each process is (a renderer, an extension host,
// ...), read with github.com/prometheus/procfs. The farm's metrics and
// editorbench account with it for code-server's process group and
// Chromium's process tree.
package procstat

import (
	"github.com/prometheus/procfs"
)

// ClockTicks is USER_HZ, the unit of utime and stime in /proc/*/stat; it
// is 100 on the Linux builds that matter here.
const ClockTicks = 100

// Proc is what /proc/<pid>/stat says of a process: its parent, its process
// group, its CPU time (utime + stime) in clock ticks, its resident set in
// bytes (the count status's VmRSS gives, without a second file read per
// process) and its start time in clock ticks after boot, which tells a
// process from a later one given the same pid.
type Proc struct {
	PPID, PGrp int
	Ticks      int64
	RSS        int64
	Start      int64
}

// Read reads the stat line of every process in /proc; processes that exit
// while being read are left out.
func Read() map[int]Proc {
	out := map[int]Proc{}
	procs, err := procfs.AllProcs()
	if err != nil {
		return out
	}
	for _, p := range procs {
		if st, err := p.Stat(); err == nil {
			out[p.PID] = fromStat(st)
		}
	}
	return out
}

func fromStat(st procfs.ProcStat) Proc {
	return Proc{PPID: st.PPID, PGrp: st.PGRP, Ticks: int64(st.UTime + st.STime), RSS: int64(st.ResidentMemory()), Start: int64(st.Starttime)}
}

// SelfTicks is this process's CPU time (utime + stime) in clock ticks.
func SelfTicks() int64 {
	p, err := procfs.Self()
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return fromStat(st).Ticks
}

// Tree returns root and all its descendants among procs (none when root
// is not there, or 0).
func Tree(procs map[int]Proc, root int) []int {
	if _, ok := procs[root]; !ok || root <= 0 {
		return nil
	}
	children := map[int][]int{}
	for pid, p := range procs {
		children[p.PPID] = append(children[p.PPID], pid)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// Group returns the processes of process group pgid among procs (none for
// 0, the kernel's threads' group).
func Group(procs map[int]Proc, pgid int) []int {
	if pgid <= 0 {
		return nil
	}
	var out []int
	for pid, p := range procs {
		if p.PGrp == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// Usage is the CPU time in clock ticks and the resident memory in bytes of
// the process groups pgids and of root's process tree together (a run's
// editors and its browser), as of procs.
func Usage(procs map[int]Proc, pgids []int, root int) (ticks, rss int64) {
	pids := Tree(procs, root)
	for _, pgid := range pgids {
		pids = append(pids, Group(procs, pgid)...)
	}
	for _, pid := range pids {
		ticks += procs[pid].Ticks
		rss += procs[pid].RSS
	}
	return ticks, rss
}

// PSS is the process's proportional set size in bytes (a page shared by n
// processes counts 1/n in each), 0 if it is gone. Reading it walks the
// process's page tables: read it seldom.
func PSS(pid int) int64 {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	r, err := p.ProcSMapsRollup()
	if err != nil {
		return 0
	}
	return int64(r.Pss)
}
