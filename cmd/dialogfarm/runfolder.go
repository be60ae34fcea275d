package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"dialogfarm/pipeline"
)

// runSource is the run a command reads: a run folder named RUN, or (as
// the older --in named one) a dialogues file in a run folder.
type runSource struct {
	Dir       string // the run folder
	Dialogues string // RUN/dialogues.jsonl, or the file named
	File      bool   // RUN named a file, not the folder
	// Manifest is RUN/run.json, when Found: the profile, seed and export
	// settings the run was made with.
	Manifest pipeline.Manifest
	Found    bool
}

// deprecateRunFlag keeps an older flag that named the run (--run, --in)
// working, hidden from help; runSourceOf logs a warning when it is used
// (not cobra's deprecation note, which prints on stdout, into a report
// piped as JSON).
func deprecateRunFlag(cmd *cobra.Command, name, usage string) {
	cmd.Flags().String(name, "", usage)
	_ = cmd.Flags().MarkHidden(name)
}

// runSourceOf resolves the run a command reads: its positional RUN or,
// from older scripts, the deprecated flag (--run or --in; "" for none).
func (a *app) runSourceOf(cmd string, args []string, flag string) (runSource, error) {
	var src runSource
	path := ""
	if len(args) > 0 {
		path = args[0]
	}
	if old := a.v.GetString(flag); flag != "" && old != "" {
		if path != "" && filepath.Clean(path) != filepath.Clean(old) {
			return src, fmt.Errorf("%s: RUN %s and --%s %s name two runs; give RUN only", cmd, path, flag, old)
		}
		path = old
		a.log.Warn("--"+flag+" is deprecated: name the run as the argument RUN", zap.String("instead", "dialogfarm "+cmd+" "+old))
	}
	if path == "" {
		return src, fmt.Errorf("%s: name the run folder: dialogfarm %s RUN", cmd, cmd)
	}
	info, err := os.Stat(path)
	if err != nil {
		return src, fmt.Errorf("%s: RUN: %w", cmd, err)
	}
	src.Dir, src.Dialogues = path, filepath.Join(path, pipeline.DialoguesFile)
	if !info.IsDir() {
		src.Dir, src.Dialogues, src.File = filepath.Dir(path), path, true
	}
	if src.Manifest, src.Found, err = pipeline.ReadManifest(src.Dir); err != nil {
		return src, fmt.Errorf("%s: %w", cmd, err)
	}
	return src, nil
}

// minScore is --min-score when it is set, else the run's, else def.
func (a *app) minScore(src runSource, def float64) float64 {
	switch {
	case a.v.IsSet("min-score"):
		return a.v.GetFloat64("min-score")
	case src.Manifest.MinScore != nil:
		return *src.Manifest.MinScore
	}
	return def
}

// allowOffline is --allow-offline when it is set, else whether the run
// exported the offline stand-in's answers.
func (a *app) allowOffline(src runSource) bool {
	if a.v.IsSet("allow-offline") {
		return a.v.GetBool("allow-offline")
	}
	return src.Manifest.AllowOffline
}

// stringSetting is the flag name when set, else the run's value when it
// has one, else the flag's default.
func (a *app) stringSetting(name, fromRun string) string {
	if a.v.IsSet(name) || fromRun == "" {
		return a.v.GetString(name)
	}
	return fromRun
}

var errNoProfile = errors.New("no --profile, and the run folder has no run.json naming one")
