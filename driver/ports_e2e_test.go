package driver

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// portScanPattern is in the command line of the shell VS Code's extension
// host starts to look for ports to forward: `ls -l /proc/[0-9]*/fd/[0-9]*
// | grep socket:`. For a remote it runs once when the host starts and,
// unless remote.autoForwardPortsSource is "output", again at least every
// 2 s (20 times as long as a scan takes).
const portScanPattern = "/proc/[0-9]*/fd/"

// watchPortScans counts, until stop is called, the port scans the editor's
// processes (code-server's, whose process ID editorPID gives, 0 until it
// runs) start, by the scanning shell's parent (an extension host), and
// lists what the group's other new processes ran. It lists /proc every
// 10 ms and reads each new process of code-server's process group until it
// has exec'd (a fork shows its parent's command line until then), against
// a shell that lives as long as its ls of every process's file descriptors
// (tens of milliseconds).
func watchPortScans(editorPID func() int) (stop func() (scans map[int]int, group []string)) {
	done, out := make(chan struct{}), make(chan struct{})
	scans := map[int]int{} // by the scanning shell's parent
	var group []string     // what the group's other processes exec'd
	go func() {
		defer close(out)
		seen, pending := map[int]bool{}, map[int]bool{}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if ed := editorPID(); ed > 0 {
				for _, pid := range procPIDs() {
					if !seen[pid] {
						seen[pid] = true
						if g, err := syscall.Getpgid(pid); err == nil && g == ed {
							pending[pid] = true
						}
					}
				}
			}
			for pid := range pending {
				cmd := cmdline(pid)
				pp := parentOf(pid)
				switch {
				case cmd == "":
					delete(pending, pid) // gone
				case cmd == cmdline(pp):
					// A fork that has not exec'd yet (a fork of a big
					// process can take a while): look again.
				case strings.Contains(cmd, portScanPattern):
					scans[pp]++ // by its extension host
					delete(pending, pid)
				default:
					group = append(group, fmt.Sprintf("%d<-%d %.100s", pid, pp, cmd))
					delete(pending, pid)
				}
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() (map[int]int, []string) {
		close(done)
		<-out
		return scans, group
	}
}

// procPIDs lists the processes in /proc.
func procPIDs() []int {
	entries, _ := os.ReadDir("/proc")
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// parentOf is pid's parent, or 0 if it is gone.
func parentOf(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	p, ok := parseStatPPID(data)
	if !ok {
		return 0
	}
	return p
}

// parseStatPPID reads the parent from a /proc/<pid>/stat line.
func parseStatPPID(data []byte) (int, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 > len(data) {
		return 0, false
	}
	f := strings.Fields(string(data[i+2:]))
	if len(f) < 2 {
		return 0, false
	}
	p, err := strconv.Atoi(f[1])
	return p, err == nil
}

func cmdline(pid int) string {
	data, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.ReplaceAll(string(data), "\x00", " ")
}
