package tether

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The helper process the test starts: it tethers a long sleep, prints its
// pid and waits to be killed.
func TestMain(m *testing.M) {
	if os.Getenv("TETHER_HELPER") == "1" {
		p, err := Start(exec.Command("sleep", "1000"))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(p.Pid())
		<-p.Done()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A process killed with SIGKILL takes its tethered child with it, though
// the child leads a process group of its own.
func TestAChildDiesWithItsParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), "TETHER_HELPER=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the helper printed no pid: %v", err)
	}
	child, err := strconv.Atoi(line[:len(line)-1])
	if err != nil {
		t.Fatalf("the helper printed %q", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	if pgid, err := syscall.Getpgid(child); err != nil || pgid != child {
		t.Errorf("the child's process group is %d (%v), want its own, %d", pgid, err, child)
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for !gone(child) {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the child %d still runs 10 s after its parent was killed", child)
		}
	}
}

// gone says whether pid has exited (and was reaped, or is a zombie).
func gone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command in parentheses: Z is a zombie.
	for i := len(data) - 1; i > 0; i-- {
		if data[i] == ')' {
			return i+2 < len(data) && data[i+2] == 'Z'
		}
	}
	return false
}

// A child that ends is reported with how it ended.
func TestDoneAndErr(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", "exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a child that exits at once is not done after 10 s")
	}
	var ee *exec.ExitError
	if err := p.Err(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("Err = %v, want exit status 3", err)
	}
	if _, err := Start(exec.Command("/no/such/binary")); err == nil {
		t.Error("starting a missing binary did not fail")
	}
}
