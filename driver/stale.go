package driver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"dialogfarm/internal/runfiles"

	"go.uber.org/zap"
)

// A run killed with SIGKILL cannot stop its editor and browser, which run
// in their own process groups. The kernel kills their leaders with it
// (they are tethered: see internal/tether), and their helpers exit after
// them; for what outlives that (a helper that does not exit, a run of an
// older dialogfarm), the run folder keeps their process group ids, and
// the run's PID, in processes.json, and the next run on the same folder
// ends any that are still alive before it starts its own, but only when
// the run that started them is no longer alive: a live run holds the
// folder's lock (LockRunFolder).

const processesFile = "processes.json"

type processGroups struct {
	// Editors are every code-server of the run: the one its simulators
	// share, or one per simulator (isolation editor).
	Editors []int `json:"code_server_pgids"`
	// Editor is the one code-server a run before isolation wrote.
	Editor  int `json:"code_server_pgid,omitempty"`
	Browser int `json:"chromium_pgid"`
	Run     int `json:"run_pid,omitempty"`
}

func writeProcessGroups(out string, p processGroups) error {
	data, _ := json.Marshal(p)
	return runfiles.WriteAtomic(filepath.Join(out, processesFile), data)
}

// killStale ends the process groups a previous run on out left behind,
// unless that run still holds out's lock. A group is only killed when its leader's command line names a folder inside
// out, so a recycled pid of an unrelated process is left alone.
func killStale(out string, log *zap.Logger) error {
	data, err := os.ReadFile(filepath.Join(out, processesFile))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", processesFile, err)
	}
	var p processGroups
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(out, processesFile), err)
	}
	if alive, holder := runAlive(out); alive && p.Run != 0 && holder == p.Run {
		log.Info("the processes in processes.json belong to a live run: left alone", zap.Int("run_pid", p.Run))
		return nil
	}
	type group struct {
		name string
		pgid int
	}
	groups := []group{{"code-server", p.Editor}, {"chromium", p.Browser}}
	for _, pgid := range p.Editors {
		groups = append(groups, group{"code-server", pgid})
	}
	for _, g := range groups {
		if g.pgid <= 0 || !cmdlineMentions(g.pgid, out) {
			continue
		}
		log.Warn("ending a process group a killed run left behind", zap.String("process", g.name), zap.Int("pgid", g.pgid))
		_ = syscall.Kill(-g.pgid, syscall.SIGKILL)
	}
	return os.Remove(filepath.Join(out, processesFile))
}

func cmdlineMentions(pid int, dir string) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	return strings.Contains(strings.ReplaceAll(string(data), "\x00", " "), dir+string(filepath.Separator))
}
