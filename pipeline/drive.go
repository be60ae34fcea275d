package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/driver"
	"dialogfarm/driver/workbench"
	"dialogfarm/internal/runfiles"
	"dialogfarm/redact"
)

// DriveConfig is the drive stage: the capture endpoint the plugin talks to
// and the simulators that drive the editor.
type DriveConfig struct {
	Capture capture.Config
	Run     driver.RunConfig
	// Farm is the queue the configs go through (embedded by default).
	Farm FarmConfig
	// Redact replaces secrets; nil builds one. Share one across a run's
	// stages so a secret keeps its placeholder everywhere.
	Redact *redact.Redactor
}

// Drive starts the capture endpoint answering with responder, puts every
// config not yet recorded ok in cfg.Run.Out on the farm's queue (embedded
// unless cfg.Farm names a remote one), drives them with local simulators
// (and any remote workers), collects one record per config, and stops
// everything. Every exchange is also appended to
// OUT/exchanges.jsonl as it completes, so a request and its answers are kept
// even when the dialogue that made it fails later. When every config is
// already recorded ok, nothing is started.
func Drive(ctx context.Context, cfg DriveConfig, configs []dialog.ChatConfig, responder capture.Responder, followUps workbench.FollowUps, log *zap.Logger) (sum driver.Summary, err error) {
	red, err := redactor(cfg.Redact)
	if err != nil {
		return driver.Summary{}, err
	}
	// The editor only ever opens sanitised copies, and the queries typed
	// into the plugin are redacted the same way.
	if configs, err = sanitiseConfigs(ctx, red, cfg.Run.Out, configs, log); err != nil {
		return driver.Summary{}, err
	}
	if sum, done, err := allRecorded(cfg.Run.Out, configs); err != nil || done {
		return sum, err
	}
	err = withCapture(ctx, cfg, responder, log, func(srv *capture.Server) error {
		sum, err = driveFarm(ctx, cfg, configs, srv, followUps, log)
		return err
	})
	return sum, err
}

// withCapture runs f with the capture endpoint listening and recording
// every exchange in OUT/exchanges.jsonl.
func withCapture(ctx context.Context, cfg DriveConfig, responder capture.Responder, log *zap.Logger, f func(*capture.Server) error) error {
	if err := runfiles.MkdirAll(cfg.Run.Out); err != nil {
		return fmt.Errorf("create run folder: %w", err)
	}
	sink, err := openExchangeLog(filepath.Join(cfg.Run.Out, "exchanges.jsonl"), cfg.Farm.ExchangesMiB)
	if err != nil {
		return err
	}
	defer sink.Close()
	srv, err := capture.Listen(ctx, cfg.Capture, responder, sink, log)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return f(srv)
}

// allRecorded says whether every config is already recorded ok in dir.
func allRecorded(dir string, configs []dialog.ChatConfig) (driver.Summary, bool, error) {
	records, err := driver.OpenRecordLog(dir)
	if err != nil {
		return driver.Summary{}, false, err
	}
	defer records.Close()
	sum := driver.Summary{Records: records.Path()}
	for _, c := range configs {
		if !records.Done(c.ID) {
			return driver.Summary{}, false, nil
		}
		sum.Skipped++
	}
	return sum, true, nil
}
