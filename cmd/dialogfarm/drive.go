package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"dialogfarm/adapter"
	"dialogfarm/capture"
	"dialogfarm/configgen"
	"dialogfarm/dialog"
	"dialogfarm/driver"
	"dialogfarm/driver/editor"
	"dialogfarm/farm"
	"dialogfarm/pipeline"
	"dialogfarm/pool"
	"dialogfarm/redact"
)

func driveCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "drive",
		Short: "Drive chat configs through the real editor and plugin, recording each dialogue",
		Long: `drive executes each chat config (one JSON object per line) in code-server,
through the Q&A plugin's UI, with the plugin's model requests answered by the
capture endpoint. It writes OUT/dialogues.jsonl, one record per config, and
OUT/exchanges.jsonl, every request and answer as it happens. Started again on
the same OUT it skips the configs already recorded ok.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.drive(cmd.Context()) },
	}
	f := cmd.Flags()
	f.String("configs", "", "chat configs, JSONL (required); repo paths are relative to the working directory")
	f.String("out", "", "run folder (required)")
	addDriveFlags(cmd)
	addQueryModelFlags(cmd)
	addResponderFlags(cmd)
	addToolFlags(cmd)
	return cmd
}

// addQueryModelFlags adds the flags of the model that writes queries: the
// first ones (run) and the follow-ups a config's follow_up policy asks for.
func addQueryModelFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("query-model-base-url", "", "OpenAI-compatible base URL of the model that writes queries and follow-ups")
	f.String("query-model", "", "model that writes queries and follow-ups (empty: templates, marked as such)")
	f.String("query-api-key-env", "", "environment variable holding that model's API key (empty: no key)")
}

// queryModel is the model the flags addQueryModelFlags added name, nil
// for none; its rpm and tpm limits are limits'.
func (a *app) queryModel(limits pool.Limits) (configgen.Model, error) {
	return stageModel("queries", a.v.GetString("query-model-base-url"), a.v.GetString("query-model"),
		a.v.GetString("query-api-key-env"), 0, a.keyAllow, limits, a.log)
}

// modelLimits is how the models of a process on farm fc keep their rpm,
// tpm and farm_max_concurrency: through the farm, shared with its other
// processes, when it is a remote one; else (nil) each model on its own.
func modelLimits(fc pipeline.FarmConfig) pool.Limits {
	if fc.Limits == nil {
		return nil
	}
	return farmLimits{fc.Limits}
}

// farmLimits are a farm's shared limits as the pool asks for them.
type farmLimits struct{ l *farm.Limits }

func (f farmLimits) Limiter(l pool.Limit) pool.Limiter {
	return f.l.Limiter(farm.LimitSpec{Key: l.Key, Model: l.Model, Unit: l.Unit, PerMinute: l.PerMinute, Burst: l.Burst})
}

func (f farmLimits) Slots(c pool.Concurrency) pool.Slots {
	return f.l.Slots(farm.SlotSpec{Key: c.Key, Model: c.Model, Max: c.Max})
}

// addDriveFlags adds the flags of the drive stage.
func addDriveFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("sessions", "1", "simulators (browser windows) driving at once on one code-server; auto: as many windows as available memory holds (at most 64), each dialogue admitted while the machine has CPU and memory to spare; 0 with --nats leaves the driving to remote workers")
	f.StringSlice("adapter", []string{adapter.DefaultName}, "plugin adapter: a bundled name ("+strings.Join(adapter.Bundled(), ", ")+") or an adapter YAML file; repeat for several plugins (the first drives configs without a plugin field)")
	f.String("isolation", "", "what a simulator is: window (a window of one code-server every simulator shares) or editor (a window of a code-server of its own: its own user-data, HOME, XDG folders and extension state, for plugins that keep their endpoint in global state or files); empty: what the adapters say (editor if any says so)")
	f.Duration("answer-timeout", 5*time.Minute, "longest wait for one answer")
	rec := driver.DefaultRecycle()
	f.Int("recycle-after", rec.After, "replace a simulator's window with a fresh one after this many dialogues (0: never by count)")
	f.String("start-spacing", "auto", "least time between the starts of two dialogues on this machine, so that simulators falling idle together do not all step at once (auto: a second over the machine's cores; 0: none)")
	f.Int("recycle-heap-mib", rec.HeapMiB, "replace a simulator's window whose JavaScript heap in use passed this many MiB after a dialogue (0: never by memory; windows that share a Chromium renderer process count an equal share of its heap)")
	addFarmFlags(cmd)
	f.Int("farm-backlog", 0, "on a shared farm (--nats), how many of the run's configs wait or are in flight at once; more are enqueued as their outcomes come, so that runs sharing the farm take turns (0: three per simulator of the farm, at least 32; -1: every config at once)")
	f.Int("context-lines", configgen.DefaultConfig().ContextLines, "lines before and after the cursor the plugin sends when nothing is selected (written as its askplugin.contextLines setting)")
}

func (a *app) drive(ctx context.Context) error {
	configsPath, out := a.v.GetString("configs"), a.v.GetString("out")
	if configsPath == "" || out == "" {
		return errors.New("drive: --configs and --out are required")
	}
	lock, err := driver.LockRunFolder(out)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	configs, err := readConfigs(configsPath)
	if err != nil && len(configs) == 0 {
		return err
	}
	if err != nil {
		// Bad lines are reported; the good ones still run.
		fmt.Fprintf(a.stderr, "dialogfarm: skipping invalid configs:\n%v\n", err)
	}
	dc, err := a.driveConfig(out)
	if err != nil {
		return err
	}
	if err := a.startMetrics(ctx, &dc); err != nil {
		return err
	}
	limits := modelLimits(dc.Farm)
	responder, report, err := a.responder(out, dc.Run, limits)
	if err != nil {
		return err
	}
	defer report(a.stderr)
	qm, err := a.queryModel(limits)
	if err != nil {
		return err
	}
	followUps := configgen.NewFollowUpWriter(qm)
	var bar *progress // made at the first report, which knows how many configs are left
	dc.Run.Progress = func(p driver.Progress) {
		if bar == nil {
			bar = a.newProgress("drive", p.Total)
		}
		bar.Set(p.Done)
	}
	sum, err := pipeline.Drive(ctx, dc, configs, responder, followUps, a.log)
	if bar != nil {
		bar.Finish()
	}
	fmt.Fprintf(a.stdout, "drove %d configs: %d ok, %d failed, %d already recorded\nrecords: %s\n",
		sum.OK+sum.Failed, sum.OK, sum.Failed, sum.Skipped, sum.Records)
	if err != nil {
		return err
	}
	if sum.Failed > 0 {
		return fmt.Errorf("%d configs failed; see failed_step and error in %s and the screenshots under %s",
			sum.Failed, sum.Records, filepath.Join(out, "failures"))
	}
	return nil
}

// driveConfig fills the drive stage's config from the flags.
func (a *app) driveConfig(out string) (pipeline.DriveConfig, error) {
	rc := driver.DefaultRunConfig(a.root(), out)
	rc.Adapters = nil
	var versions []string
	for _, name := range a.v.GetStringSlice("adapter") {
		ad, err := adapter.Load(name, a.root())
		if err != nil {
			return pipeline.DriveConfig{}, err
		}
		manifest, err := editor.AdapterManifest(ad)
		if err != nil {
			return pipeline.DriveConfig{}, err
		}
		rc.Adapters = append(rc.Adapters, ad)
		versions = append(versions, manifest.ID()+"@"+manifest.Version)
	}
	rc.Editor, rc.Browser = a.editorConfig(), a.browserConfig()
	sessions, auto, err := parseSessions(a.v.GetString("sessions"))
	if err != nil {
		return pipeline.DriveConfig{}, err
	}
	rc.Sessions = sessions
	switch iso := a.v.GetString("isolation"); iso {
	case "", adapter.IsolationWindow, adapter.IsolationEditor:
		rc.Isolation = iso
	default:
		return pipeline.DriveConfig{}, fmt.Errorf("--isolation %q: want window or editor", iso)
	}
	rc.Timeouts.Answer = a.v.GetDuration("answer-timeout")
	rc.Recycle = driver.Recycle{After: a.v.GetInt("recycle-after"), HeapMiB: a.v.GetInt("recycle-heap-mib")}
	if err := rc.Recycle.Validate(); err != nil {
		return pipeline.DriveConfig{}, fmt.Errorf("--recycle-after/--recycle-heap-mib: %w", err)
	}
	if v := a.v.GetString("start-spacing"); v != "auto" { // auto: DefaultRunConfig's, for this machine's cores
		if rc.StartSpacing, err = time.ParseDuration(v); err != nil || rc.StartSpacing < 0 {
			return pipeline.DriveConfig{}, fmt.Errorf("--start-spacing %q: want auto, 0 or a duration such as 500ms", v)
		}
	}
	rc.PluginVersion = strings.Join(versions, ",")
	rc.Assignments = driver.NewAssignments()
	fc, err := a.farmConfig()
	if err != nil {
		return pipeline.DriveConfig{}, err
	}
	fc.Local = rc.Sessions > 0 || fc.NATS.URL == ""
	fc.Auto = auto
	n := a.v.GetInt("context-lines") // in range (ranges.go)
	if rc.Editor.Settings == nil {
		rc.Editor.Settings = map[string]any{}
	}
	rc.Editor.Settings["askplugin.contextLines"] = n
	det, err := redact.NewDetector()
	if err != nil {
		return pipeline.DriveConfig{}, err
	}
	recipe, err := a.recipe(rc, versions)
	if err != nil {
		return pipeline.DriveConfig{}, err
	}
	fc.Recipe = &recipe
	cc := capture.DefaultConfig()
	cc.Classify = adapter.Classify(rc.Adapters)
	return pipeline.DriveConfig{Capture: cc, Run: rc, Farm: fc, Redact: redact.NewRedactor(det)}, nil
}

// readConfigs reads a configs file.
func readConfigs(path string) ([]dialog.ChatConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read configs: %w", err)
	}
	defer f.Close()
	return dialog.ReadConfigs(f, path)
}

// parseSessions reads --sessions: a count, or auto (as many as memory
// holds, with each dialogue admitted by a CPU and memory budget).
func parseSessions(v string) (n int, auto bool, err error) {
	if v == "auto" {
		return farm.AutoSessions(runtime.NumCPU()), true, nil
	}
	n, err = strconv.Atoi(v) // in range: the flag's value checked it (ranges.go)
	if err != nil {
		return 0, false, fmt.Errorf("--sessions %q: want a number of simulators or auto", v)
	}
	return n, false, nil
}
