package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"dialogfarm/driver"
)

// TestStrictConfig feeds bad values and unknown keys through each source —
// flag, environment variable, config file (--config and DIALOGFARM_CONFIG)
// — and checks the command fails with a message naming the source and the
// value, before doing any work.
func TestStrictConfig(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	plan := filepath.Join(dir, "plan.json")
	planArgs := []string{"plan", "--profile", "default", "--n", "3", "--out", plan}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want []string // all must appear in the error
	}{
		{"flag bad float", []string{"export", "--in", "x", "--out", "y", "--min-score", "high"}, nil,
			[]string{`"high"`, "--min-score"}},
		{"flag bad int", append(planArgs[:4:4], "abc", "--out", plan), nil,
			[]string{`"abc"`, "--n"}},
		{"flag unknown", append(planArgs, "--min-scor", "4"), nil,
			[]string{"unknown flag", "--min-scor"}},
		{"flag bad pool value", []string{"judge", "--in", "x", "--out", "y", "--set", "pool.retry.max_attempts=lots"}, nil,
			[]string{"--set pool.retry.max_attempts=lots", `"lots"`, "retry.max_attempts"}},
		{"flag unknown pool key", []string{"judge", "--in", "x", "--out", "y", "--set", "judge.params.min_char=3"}, nil,
			[]string{"--set judge.params.min_char=3", "min_char"}},
		{"env bad float", []string{"export", "--in", "x", "--out", "y"}, map[string]string{"DIALOGFARM_MIN_SCORE": "abc"},
			[]string{"environment variable DIALOGFARM_MIN_SCORE", `"abc"`}},
		{"env bad seed", planArgs, map[string]string{"DIALOGFARM_SEED": "abc"},
			[]string{"environment variable DIALOGFARM_SEED", `"abc"`, "--seed"}},
		{"env bad bool", planArgs, map[string]string{"DIALOGFARM_ALLOW_OFFLINE": "yes please"},
			[]string{"environment variable DIALOGFARM_ALLOW_OFFLINE", `"yes please"`}},
		{"env bad value for another command's flag", planArgs, map[string]string{"DIALOGFARM_MIN_SCORE": "high"},
			[]string{"environment variable DIALOGFARM_MIN_SCORE", `"high"`}},
		{"env bad pool value", planArgs, map[string]string{"DIALOGFARM_POOL_RETRY_MAX_ATTEMPTS": "many"},
			[]string{"environment variable DIALOGFARM_POOL_RETRY_MAX_ATTEMPTS", `"many"`}},
		{"env unknown pool key", planArgs, map[string]string{"DIALOGFARM_POOL_RETRY_MAX_ATTEMPS": "3"},
			[]string{"DIALOGFARM_POOL_RETRY_MAX_ATTEMPS", "names no setting; did you mean DIALOGFARM_POOL_RETRY_MAX_ATTEMPTS?"}},
		{"file bad float", append(planArgs, "--config", file("score.yaml", "min-score: high\n")), nil,
			[]string{"config file " + filepath.Join(dir, "score.yaml"), "min-score", `"high"`}},
		{"file bad int", append(planArgs[:1:1], "--config", file("n.yaml", "n: 2.5\nprofile: default\nout: x\n")), nil,
			[]string{"n.yaml", "key n", "2.5"}},
		{"file duration without unit", append(planArgs, "--config", file("timeout.yaml", "answer-timeout: 300\n")), nil,
			[]string{"timeout.yaml", "answer-timeout", "300", "missing unit"}},
		{"file list for a single value", append(planArgs, "--config", file("list.yaml", "seed: [1, 2]\n")), nil,
			[]string{"list.yaml", "seed", "not a list"}},
		{"file unknown key", append(planArgs, "--config", file("typo.yaml", "min-scor: 4\n")), nil,
			[]string{"config file " + filepath.Join(dir, "typo.yaml"), `unknown key "min-scor"`}},
		{"file bad pool value", append(planArgs, "--config", file("pool.yaml", "pool:\n  members: [{name: a, rpm: fast}]\n")), nil,
			[]string{"pool.yaml", "rpm", `"fast"`}},
		{"file pool duration without unit", append(planArgs, "--config", file("pooldur.yaml", "pool:\n  retry: {base_delay: 3}\n")), nil,
			[]string{"pooldur.yaml", "retry.base_delay", "3", "no unit"}},
		{"file unknown pool key", append(planArgs, "--config", file("poolkey.yaml", "pool:\n  cach_dir: x\n")), nil,
			[]string{"poolkey.yaml", "cach_dir"}},
		{"file pool not a mapping", append(planArgs, "--config", file("poollist.yaml", "pool: [a]\n")), nil,
			[]string{"poollist.yaml", "pool: want a mapping"}},
		{"file judge section", append(planArgs, "--config", file("judge.yaml", "judge:\n  params: {min_chars: few}\n")), nil,
			[]string{"judge.yaml", "params.min_chars", `"few"`}},
		{"flag unknown browser backend", []string{"drive", "--configs", "none.jsonl", "--out", dir, "--browser", "firefox"}, nil,
			[]string{"--browser", `"firefox"`, "unknown browser backend", "rod", "chromedp"}},
		{"env unknown browser backend", []string{"drive", "--configs", "none.jsonl", "--out", dir}, map[string]string{"DIALOGFARM_BROWSER": "Chromedp"},
			[]string{"environment variable DIALOGFARM_BROWSER", `"Chromedp"`, "unknown browser backend"}},
		{"file unknown browser backend", append(planArgs, "--config", file("browser.yaml", "browser: webkit\n")), nil,
			[]string{"browser.yaml", "key browser", "webkit", "unknown browser backend"}},
		{"DIALOGFARM_CONFIG bad value", planArgs, map[string]string{"DIALOGFARM_CONFIG": file("envcfg.yaml", "seed: abc\n")},
			[]string{"config file " + filepath.Join(dir, "envcfg.yaml"), "seed", `"abc"`}},
		{"DIALOGFARM_CONFIG unknown key", planArgs, map[string]string{"DIALOGFARM_CONFIG": file("envkey.yaml", "sead: 1\n")},
			[]string{"envkey.yaml", `unknown key "sead"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), c.args, &stdout, &stderr)
			if err == nil {
				t.Fatalf("dialogfarm %s succeeded, want an error\n%s", strings.Join(c.args, " "), stdout.String())
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if _, serr := os.Stat(plan); serr == nil {
				t.Errorf("the plan was written despite the error")
				os.Remove(plan)
			}
		})
	}
}

// TestDriveRefusesBadTimeoutBeforeTheEditor: a bad duration in the
// environment stops drive at once, before it reads configs or starts
// anything.
func TestDriveRefusesBadTimeoutBeforeTheEditor(t *testing.T) {
	t.Setenv("DIALOGFARM_ANSWER_TIMEOUT", "300")
	err := run(context.Background(), []string{"drive", "--configs", "none.jsonl", "--out", t.TempDir()}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "DIALOGFARM_ANSWER_TIMEOUT") || !strings.Contains(err.Error(), `"300"`) {
		t.Fatalf("err = %v", err)
	}
}

// TestConfigSourcesPrecedence: the flag beats the environment, which beats
// the config file (given by DIALOGFARM_CONFIG), which beats the default;
// good values from each source are used.
func TestConfigSourcesPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "dialogfarm.yaml")
	os.WriteFile(cfg, []byte("n: 5\nseed: 11\nprofile: default\n"), 0o644)
	t.Setenv("DIALOGFARM_CONFIG", cfg)
	t.Setenv("DIALOGFARM_SEED", "22")
	// report's --json is a file name, another command's --json a bool: a
	// file name suits one of them, so it is no error for plan.
	t.Setenv("DIALOGFARM_JSON", filepath.Join(dir, "report.json"))
	out := filepath.Join(dir, "plan.json")
	got := runFront(t, "plan", "--out", out)
	if !strings.Contains(got, "5 dialogues") || !strings.Contains(got, "seed 22") {
		t.Errorf("env over file: %s", got)
	}
	got = runFront(t, "plan", "--out", out, "--seed", "33", "--n", "4")
	if !strings.Contains(got, "4 dialogues") || !strings.Contains(got, "seed 33") {
		t.Errorf("flag over env: %s", got)
	}
}

func TestVersionFlag(t *testing.T) {
	out := runFront(t, "--version")
	if !strings.HasPrefix(out, "dialogfarm ") || !strings.Contains(out, "go1.") {
		t.Errorf("--version printed %q", out)
	}
}

// TestSecondRunOnALockedFolder: drive and run on a folder whose lock is
// held fail at once, naming the holder's PID, before reading configs or
// starting an editor (no tools are needed for this test).
func TestSecondRunOnALockedFolder(t *testing.T) {
	out := t.TempDir()
	lock, err := driver.LockRunFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	pid := "pid " + strconv.Itoa(os.Getpid())
	for _, args := range [][]string{
		{"drive", "--configs", "no-such-configs.jsonl", "--out", out, "--root", t.TempDir()},
		{"run", "--repos", ".", "--n", "3", "--out", out, "--root", t.TempDir()},
	} {
		err := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), pid) || !strings.Contains(err.Error(), "in use") {
			t.Errorf("%s: err = %v, want the folder in use by %s", args[0], err, pid)
		}
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("the refused commands wrote into the run folder: %v", entries)
	}
}

// TestFlagTypesAgree: one environment variable or config key sets the
// flag of that name in every command, so a name should have one type; a
// value meant for one of the flags can fail on the other (DIALOGFARM_JSON=
// report.json is no bool). The names that already differ are listed.
func TestFlagTypesAgree(t *testing.T) {
	known := map[string]bool{"seed": true, "json": true, "runs": true}
	root := newRoot(&app{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, v: viper.New()})
	types := map[string]string{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if prev, ok := types[f.Name]; ok && prev != f.Value.Type() && !known[f.Name] {
				t.Errorf("--%s is a %s in %s but a %s elsewhere", f.Name, f.Value.Type(), c.CommandPath(), prev)
			}
			types[f.Name] = f.Value.Type()
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(types) < 20 {
		t.Errorf("only %d flags found", len(types))
	}
}

// parsedApp is the app as the command args names sees it once its flags,
// environment and config file are read (a.init), without running it.
func parsedApp(t *testing.T, args []string) *app {
	t.Helper()
	a := &app{v: viper.New(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	cmd, rest, err := newRoot(a).Find(args)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatal(err)
	}
	if err := a.init(cmd); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestBrowserJITFlag reads --browser-jit as the commands do (a.init:
// flag, environment, config file) and checks the browser config the driver
// gets: V8's optimising compilers off unless it is set.
func TestBrowserJITFlag(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "jit.yaml")
	if err := os.WriteFile(cfgFile, []byte("browser-jit: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		env  string
		want bool
	}{
		{"drive default", []string{"drive"}, "", false},
		{"drive flag", []string{"drive", "--browser-jit"}, "", true},
		{"worker flag", []string{"worker", "--browser-jit=true"}, "", true},
		{"drive env", []string{"drive"}, "true", true},
		{"drive config file", []string{"drive", "--config", cfgFile}, "", true},
		{"flag over env", []string{"drive", "--browser-jit=false"}, "true", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("DIALOGFARM_BROWSER_JIT", c.env)
			}
			a := parsedApp(t, c.args)
			if got := a.browserConfig().OptimizingJIT; got != c.want {
				t.Errorf("OptimizingJIT %v, want %v", got, c.want)
			}
		})
	}
}

// TestCredsAlias: --creds, the name the farm's design gives the NATS
// credentials file, stands for --nats-creds on every command with farm
// flags and on status.
func TestCredsAlias(t *testing.T) {
	for _, args := range [][]string{
		{"worker", "--nats", "nats://127.0.0.1:4222", "--creds", "/keys/w.creds"},
		{"run", "--creds", "/keys/w.creds"},
		{"drive", "--nats-creds", "/keys/w.creds"},
		{"status", "--nats", "nats://127.0.0.1:4222", "--creds", "/keys/w.creds"},
	} {
		t.Run(args[0]+" "+args[len(args)-2], func(t *testing.T) {
			a := parsedApp(t, args)
			if got := a.v.GetString("nats-creds"); got != "/keys/w.creds" {
				t.Errorf("nats-creds %q", got)
			}
			if args[0] == "status" {
				return
			}
			fc, err := a.farmConfig()
			if err != nil || fc.NATS.Creds != "/keys/w.creds" {
				t.Errorf("farm config %+v, %v", fc.NATS, err)
			}
		})
	}
}
