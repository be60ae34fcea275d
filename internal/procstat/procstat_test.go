package procstat

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process that shows no command line (an exited one not yet reaped, as
// between fork and exec) is not classed for good: a sampler asks again.
func TestProcessClassWithoutCommandLine(t *testing.T) {
	cmd := exec.Command("/bin/true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	stat := "/proc/" + strconv.Itoa(pid) + "/stat"
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); ; <-tick.C {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/bin/true did not exit: %s", b)
		}
	}
	if got := ClassOf(pid, true); got != ChromiumForked {
		t.Errorf("a browser process without a command line is classed %q, want %q (asked again)", got, ChromiumForked)
	}
}

// TestReadSelf: what Read says of this process agrees with what its
// status and the os package say.
func TestReadSelf(t *testing.T) {
	self, ok := Read()[os.Getpid()]
	if !ok {
		t.Fatal("Read does not list this process")
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	var kb int64
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, found := strings.CutPrefix(line, "VmRSS:"); found {
			kb, _ = strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
		}
	}
	if diff := self.RSS - kb<<10; kb == 0 || diff > 8<<20 || diff < -8<<20 {
		t.Errorf("stat's rss %d bytes, status's VmRSS %d kB", self.RSS, kb)
	}
	if self.PPID != os.Getppid() || self.Start <= 0 {
		t.Errorf("parent %d (want %d), start %d", self.PPID, os.Getppid(), self.Start)
	}
	if got := SelfTicks(); got < self.Ticks {
		t.Errorf("SelfTicks %d after Read's %d", got, self.Ticks)
	}
}

// A child in a process group of its own and its own child: Group finds
// both by the group, Tree both from the child, and neither names this
// process.
func TestGroupAndTree(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }()
	sh := cmd.Process.Pid
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); ; <-tick.C {
		procs := Read()
		group, tree := Group(procs, sh), Tree(procs, sh)
		slices.Sort(group)
		slices.Sort(tree)
		if len(group) == 2 {
			if !slices.Equal(group, tree) || !slices.Contains(group, sh) || slices.Contains(group, os.Getpid()) {
				t.Fatalf("group %v, tree %v of the shell %d", group, tree, sh)
			}
			if procs[sh].Start == 0 || procs[sh].RSS == 0 {
				t.Errorf("the shell's start %d, RSS %d", procs[sh].Start, procs[sh].RSS)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell's group never held 2 processes: %v (tree %v)", group, tree)
		}
	}
}

// Tree of a process that is not there, or of 0, is empty, and so is
// group 0 (the kernel's threads).
func TestTreeOfNoProcess(t *testing.T) {
	procs := map[int]Proc{1: {}, 2: {PGrp: 0}}
	if got := Tree(procs, 3); got != nil {
		t.Errorf("Tree = %v", got)
	}
	if got, rest := Group(procs, 0), Tree(procs, 0); got != nil || rest != nil {
		t.Errorf("Group(0) = %v, Tree(0) = %v", got, rest)
	}
}

// A class a forked child's parent may have is asked again; others are
// final.
func TestFinal(t *testing.T) {
	for _, c := range []struct {
		class     Class
		pid, pgrp int
		browser   int
		wantFinal bool
	}{
		{ChromiumBrowser, 10, 10, 10, true},
		{ChromiumBrowser, 11, 10, 10, false}, // the browser's child before its exec
		{ChromiumForked, 11, 10, 10, false},
		{ChromiumRenderer, 11, 10, 10, true},
		{CodeServerMain, 20, 20, 0, true},
		{CodeServerMain, 21, 20, 0, false}, // code-server's child before its exec
		{CodeServerOther, 21, 20, 0, false},
		{ExtensionHost, 21, 20, 0, true},
	} {
		if got := Final(c.class, c.pid, Proc{PGrp: c.pgrp}, c.browser); got != c.wantFinal {
			t.Errorf("Final(%s, pid %d, group %d, browser %d) = %v", c.class, c.pid, c.pgrp, c.browser, got)
		}
	}
}
