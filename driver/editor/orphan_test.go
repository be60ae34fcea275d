package editor

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// forkScript forks itself once and prints the child's pid; both then wait.
const forkScript = `const { fork } = require('child_process');
if (process.argv[2] === 'child') setInterval(() => {}, 1000);
else { console.log(fork(__filename, ['child']).pid); setInterval(() => {}, 1000); }`

// TestLauncherEndsOrphans: make setup's launcher loads orphan-exit.cjs in
// code-server's node, and so in every node process it forks. A forked
// process whose parent is killed exits within seconds with it; without
// the preload, it stays.
func TestLauncherEndsOrphans(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	launcher, err := os.ReadFile(DefaultConfig(root).Bin)
	if err != nil {
		t.Fatalf("read the launcher (run `make setup`): %v", err)
	}
	m := regexp.MustCompile(`exec "([^"]+/node)" .*--require "([^"]+orphan-exit\.cjs)" `).FindSubmatch(launcher)
	if m == nil {
		t.Fatalf("the launcher does not run node with --require orphan-exit.cjs:\n%s", launcher)
	}
	node, preload := string(m[1]), string(m[2])
	script := filepath.Join(t.TempDir(), "fork.js")
	if err := os.WriteFile(script, []byte(forkScript), 0o600); err != nil {
		t.Fatal(err)
	}
	// start runs the script and returns the parent and its forked child.
	start := func(args ...string) (*exec.Cmd, int) {
		t.Helper()
		cmd := exec.Command(node, append(args, script)...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		child, perr := strconv.Atoi(string(regexp.MustCompile(`\d+`).Find([]byte(line))))
		if err != nil || perr != nil {
			cmd.Process.Kill()
			t.Fatalf("read the child's pid: %q, %v %v", line, err, perr)
		}
		t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
		return cmd, child
	}
	alive := func(pid int) bool {
		// A child handed to init is reaped by it; one not yet reaped
		// shows as a zombie, which counts as ended.
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err == nil && !regexp.MustCompile(`^\d+ \(.*\) Z`).Match(stat)
	}
	with, withChild := start("--require", preload)
	without, withoutChild := start()
	for _, c := range []*exec.Cmd{with, without} {
		c.Process.Kill()
		c.Wait()
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(withChild) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if alive(withChild) {
		t.Errorf("a node process forked with %s is still running 10 s after its parent was killed", preload)
	}
	if !alive(withoutChild) {
		t.Errorf("without the preload, the forked process ended with its parent too: the check proves nothing")
	}
}
