package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"
)

// unit is a systemd unit file's settings: section → key → values (a key
// may be given more than once).
type unit map[string]map[string][]string

// readUnit reads a unit file: comments, continuation lines ending in a
// backslash, [Section] headers and Key=Value lines.
func readUnit(t *testing.T, path string) unit {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unit{}
	section := ""
	var pending string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if pending != "" {
			line, pending = pending+" "+line, ""
		}
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			pending = strings.TrimSuffix(line, `\`)
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.Trim(line, "[]")
			u[section] = map[string][]string{}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section == "" {
			t.Fatalf("%s:%d: not a setting: %q", path, n, line)
		}
		u[section][k] = append(u[section][k], v)
	}
	return u
}

// The service files a farm runs on (deploy/systemd) start commands this
// dialogfarm has, with flags it knows and values in their ranges; the
// worker's stop drains it: SIGTERM to the worker alone, a stop timeout
// beyond its drain, and its status 130 after a signal counted a clean stop.
func TestServiceFilesStartWhatExists(t *testing.T) {
	dir := filepath.Join("..", "..", "deploy", "systemd")
	paths, err := filepath.Glob(filepath.Join(dir, "*.service"))
	if err != nil || len(paths) < 2 {
		t.Fatalf("service files in %s: %v %v", dir, paths, err)
	}
	commands := map[string]bool{}
	for _, path := range paths {
		u := readUnit(t, path)
		svc := u["Service"]
		if len(svc["ExecStart"]) != 1 {
			t.Errorf("%s: ExecStart %q", path, svc["ExecStart"])
			continue
		}
		args := strings.Fields(svc["ExecStart"][0])
		if !strings.HasSuffix(args[0], "/bin/dialogfarm") {
			t.Errorf("%s starts %s, not the dialogfarm that make build makes", path, args[0])
			continue
		}
		a := &app{v: viper.New(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
		cmd, rest, err := newRoot(a).Find(args[1:])
		if err != nil || !cmd.Runnable() {
			t.Errorf("%s: %v: no such command (%v)", path, args[1:], err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("%s: %s: %v", path, cmd.CommandPath(), err)
			continue
		}
		if len(cmd.Flags().Args()) > 0 {
			t.Errorf("%s: %s takes no arguments, got %q", path, cmd.CommandPath(), cmd.Flags().Args())
		}
		commands[cmd.CommandPath()] = true
		if !strings.Contains(" "+strings.Join(svc["SuccessExitStatus"], " ")+" ", " 130 ") {
			t.Errorf("%s: SuccessExitStatus %q: dialogfarm ends with 130 when a signal stops it, which systemd would count a failure", path, svc["SuccessExitStatus"])
		}
		if cmd.Name() != "worker" {
			continue
		}
		if km := svc["KillMode"]; len(km) != 1 || km[0] != "mixed" {
			t.Errorf("%s: KillMode %q: the stop's SIGTERM must reach the worker alone (mixed), or code-server and Chromium end before its dialogues in progress", path, km)
		}
		drain, err := cmd.Flags().GetDuration("drain-timeout")
		if err != nil {
			t.Fatal(err)
		}
		stop, err := time.ParseDuration(strings.ReplaceAll(strings.Join(svc["TimeoutStopSec"], ""), "min", "m"))
		if err != nil || stop <= drain {
			t.Errorf("%s: TimeoutStopSec %q is not beyond the worker's --drain-timeout %s (%v)", path, svc["TimeoutStopSec"], drain, err)
		}
	}
	for _, want := range []string{"dialogfarm farm serve", "dialogfarm worker"} {
		if !commands[want] {
			t.Errorf("no service file starts %s (they start %v)", want, commands)
		}
	}

	// systemd's own check, where it is installed, with the binary's path
	// pointed at one that exists.
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: systemd's own check left out")
		return
	}
	tmp := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var copies []string
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cp := filepath.Join(tmp, filepath.Base(path))
		if err := os.WriteFile(cp, bytes.ReplaceAll(data, []byte("/opt/dialogfarm/bin/dialogfarm"), []byte(self)), 0o644); err != nil {
			t.Fatal(err)
		}
		copies = append(copies, cp)
	}
	out, err := exec.Command(analyze, append([]string{"verify"}, copies...)...).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
