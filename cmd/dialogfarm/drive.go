package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/driver"
)

func driveCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "drive",
		Short: "Drive chat configs through the real editor and plugin, recording each dialogue",
		Long: `drive executes each chat config (one JSON object per line) in code-server,
through the Q&A plugin's UI, with the plugin's model requests answered by the
capture endpoint. It writes OUT/dialogues.jsonl, one record per config.
Started again on the same OUT it skips the configs already recorded ok.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.drive(cmd.Context()) },
	}
	f := cmd.Flags()
	f.String("configs", "", "chat configs, JSONL (required)")
	f.String("out", "", "run folder (required)")
	f.String("responder", "offline", "who answers the plugin: openai (one upstream model) or offline (placeholders, never training data)")
	f.String("model-base-url", "", "OpenAI-compatible base URL for --responder openai, e.g. http://127.0.0.1:8000/v1")
	f.String("model", "", "model name for --responder openai")
	f.String("api-key-env", "", "environment variable holding the API key for --responder openai (empty: no key)")
	f.Int("sessions", 1, "simulators (browser windows) driving at once on one code-server")
	f.Duration("answer-timeout", 5*time.Minute, "longest wait for one answer")
	addToolFlags(cmd)
	return cmd
}

func (a *app) drive(ctx context.Context) error {
	configsPath, out := a.v.GetString("configs"), a.v.GetString("out")
	if configsPath == "" || out == "" {
		return errors.New("drive: --configs and --out are required")
	}
	configs, err := readConfigs(configsPath)
	if err != nil && len(configs) == 0 {
		return err
	}
	if err != nil {
		// Bad lines are reported; the good ones still run.
		fmt.Fprintf(a.stderr, "dialogfarm: skipping invalid configs:\n%v\n", err)
	}
	responder, err := a.responder()
	if err != nil {
		return err
	}
	manifest, err := driver.ReadPluginManifest(a.pluginDir())
	if err != nil {
		return err
	}
	srv, err := capture.Listen(ctx, capture.DefaultConfig(), responder, nil, a.log)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	rc := driver.DefaultRunConfig(a.root(), out)
	rc.Editor, rc.Browser = a.editorConfig(), a.browserConfig()
	rc.Sessions = a.v.GetInt("sessions")
	rc.Timeouts.Answer = a.v.GetDuration("answer-timeout")
	rc.PluginVersion = manifest.ID() + "@" + manifest.Version
	r := driver.NewRunner(rc, srv, nil, a.log)
	if err := r.Start(ctx); err != nil {
		return err
	}
	defer r.Stop()
	sum, err := r.Drive(ctx, configs)
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

// readConfigs reads a configs file; repo paths are resolved against the
// working directory.
func readConfigs(path string) ([]dialog.ChatConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read configs: %w", err)
	}
	defer f.Close()
	return dialog.ReadConfigs(f, path)
}

// responder builds the answerer the --responder flag names.
func (a *app) responder() (capture.Responder, error) {
	switch name := a.v.GetString("responder"); name {
	case "offline":
		a.log.Warn("answers come from the offline stand-in: records are marked offline and are not training data")
		return capture.Offline{}, nil
	case "openai":
		cfg := capture.DefaultOpenAIConfig()
		if u := a.v.GetString("model-base-url"); u != "" {
			cfg.BaseURL = u
		}
		if m := a.v.GetString("model"); m != "" {
			cfg.Model = m
		}
		cfg.APIKeyEnv = a.v.GetString("api-key-env")
		a.log.Info("answers come from an upstream model", zap.String("base_url", cfg.BaseURL), zap.String("model", cfg.Model))
		return capture.NewOpenAI(cfg, a.log)
	default:
		return nil, fmt.Errorf("drive: --responder must be openai or offline, got %q", name)
	}
}
