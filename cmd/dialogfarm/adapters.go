package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"dialogfarm/adapter"
	"dialogfarm/capture"
	"dialogfarm/driver"
	"dialogfarm/driver/editor"
)

func adaptersCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "adapters",
		Short: "Write, check and explore plugin adapter files",
		Long: `An adapter file tells dialogfarm how to drive one VS Code Q&A plugin (see
"Driving your own plugin" in docs/adapters.md). list shows the bundled adapters,
validate checks one (schema, then live in the editor), probe explores a plugin
that has no adapter yet.`,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the bundled adapters",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			for _, n := range adapter.Bundled() {
				fmt.Fprintln(a.stdout, n)
			}
			return nil
		},
	}
	validate := &cobra.Command{
		Use:   "validate FILE|NAME",
		Short: "Check an adapter: its schema, then live, every selector and command in the real editor",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return a.validateAdapter(cmd.Context(), args[0]) },
	}
	validate.Flags().Bool("live", true, "start the editor with the plugin and check every selector, command and condition")
	validate.Flags().String("out", "", "folder for the editor's files (default: a temporary folder, removed after)")
	addToolFlags(validate)
	probe := &cobra.Command{
		Use:   "probe --extension PATH|VSIX",
		Short: "Open a plugin's view and print its frames, interactive elements and the requests a test message sends",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.probe(cmd.Context()) },
	}
	pf := probe.Flags()
	pf.String("extension", "", "the plugin: an unpacked extension folder or a .vsix (required)")
	pf.StringArray("setting", nil, "a setting that points the plugin at dialogfarm, KEY=VALUE (VALUE as JSON if it parses, with {{capture_url}}, {{secret}}, {{session}}); repeatable")
	pf.String("message", "Hello from dialogfarm probe", "test message typed into the view (empty: none)")
	pf.String("out", "", "folder for the editor's files (default: a temporary folder, removed after)")
	pf.Bool("json", false, "print the report as JSON")
	addToolFlags(probe)
	cmd.AddCommand(list, validate, probe)
	return cmd
}

// liveRun prepares a one-session run in out (a temporary folder when
// empty) with a capture endpoint answering from the offline stand-in.
func (a *app) liveRun(ctx context.Context, out string, adapters []*adapter.Adapter) (driver.RunConfig, *capture.Server, func(), error) {
	cleanup := func() {}
	if out == "" {
		tmp, err := os.MkdirTemp("", "dialogfarm-adapters-")
		if err != nil {
			return driver.RunConfig{}, nil, nil, err
		}
		out, cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	rc := driver.DefaultRunConfig(a.root(), out)
	rc.Editor, rc.Browser, rc.Adapters = a.editorConfig(), a.browserConfig(), adapters
	cc := capture.DefaultConfig()
	cc.Classify = adapter.Classify(adapters)
	srv, err := capture.Listen(ctx, cc, capture.Offline{}, nil, a.log)
	if err != nil {
		cleanup()
		return rc, nil, nil, err
	}
	return rc, srv, func() { _ = srv.Shutdown(context.Background()); cleanup() }, nil
}

func (a *app) validateAdapter(ctx context.Context, name string) error {
	ad, err := adapter.Load(name, a.root())
	if err != nil {
		fmt.Fprintf(a.stdout, "schema: FAIL\n%v\n", err)
		return errors.New("the adapter does not validate")
	}
	fmt.Fprintf(a.stdout, "schema: ok (%s, plugin %s, triggers %s)\n", ad.Source, ad.Extension.ID, strings.Join(ad.Triggers(), ", "))
	// Before any editor starts: a plugin that requires packages it does
	// not ship cannot activate.
	if err := editor.CheckModules(ad); err != nil {
		fmt.Fprintf(a.stdout, "modules: FAIL\n%v\n", err)
		return errors.New("the adapter's plugin cannot activate")
	}
	fmt.Fprintln(a.stdout, "modules: ok (it ships every package its scripts require)")
	if !a.v.GetBool("live") {
		return nil
	}
	rc, srv, done, err := a.liveRun(ctx, a.v.GetString("out"), []*adapter.Adapter{ad})
	if err != nil {
		return err
	}
	defer done()
	checks, err := driver.ValidateLive(ctx, rc, srv, a.log)
	if err != nil {
		return err
	}
	failed := 0
	for _, c := range checks {
		mark := "ok  "
		switch {
		case strings.HasPrefix(c.Detail, "skipped"):
			mark = "skip"
			failed++
		case !c.OK:
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(a.stdout, "%s %-32s %s\n", mark, c.Field, c.Detail)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d live checks failed or were skipped", failed, len(checks))
	}
	fmt.Fprintf(a.stdout, "live: all %d checks passed\n", len(checks))
	return nil
}

func (a *app) probe(ctx context.Context) error {
	ext := a.v.GetString("extension")
	if ext == "" {
		return errors.New("probe: --extension is required")
	}
	settings := map[string]any{}
	for _, kv := range a.v.GetStringSlice("setting") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("probe: --setting %q: want KEY=VALUE", kv)
		}
		var val any
		if json.Unmarshal([]byte(v), &val) != nil {
			val = v
		}
		settings[k] = val
	}
	rc, srv, done, err := a.liveRun(ctx, a.v.GetString("out"), nil)
	if err != nil {
		return err
	}
	defer done()
	rep, err := driver.Probe(ctx, rc, driver.ProbeConfig{Extension: ext, Settings: settings, Message: a.v.GetString("message")}, srv, a.log)
	if a.v.GetBool("json") {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(rep); jerr != nil {
			return jerr
		}
		return err
	}
	printProbe(a.stdout, rep)
	return err
}

func printProbe(w io.Writer, r driver.ProbeReport) {
	fmt.Fprintf(w, "extension: %s\nactivity bar: %s\n", r.ExtensionID, strings.Join(r.ActivityBar, ", "))
	fmt.Fprintln(w, "commands:")
	for _, c := range r.Commands {
		fmt.Fprintf(w, "  %-28s %q", c.ID, c.Title)
		if c.Keybinding != "" {
			fmt.Fprintf(w, " key %s", c.Keybinding)
		}
		if c.ContextMenu {
			fmt.Fprint(w, " (editor context menu)")
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "frames:")
	for i, f := range r.Frames {
		src := ""
		if i < len(r.FrameSources) {
			src = r.FrameSources[i]
		}
		fmt.Fprintf(w, "  - %s   # %s\n", f, src)
	}
	fmt.Fprintln(w, "elements:")
	for _, e := range r.Elements {
		fmt.Fprintf(w, "  %-16s %-40s %q", e.Kind, e.Selector, e.Label)
		if e.Disabled {
			fmt.Fprint(w, " disabled")
		}
		if e.Kind == "select" {
			fmt.Fprintf(w, " value %q options %q", e.Value, e.Options)
		}
		fmt.Fprintln(w)
	}
	if r.Sent != "" {
		fmt.Fprintf(w, "test message sent by: %s\n", r.Sent)
	}
	for _, s := range r.Setup {
		fmt.Fprintf(w, "it went out only after: %s   (a setup step)\n", s)
	}
	fmt.Fprintf(w, "requests (%d):\n", len(r.Requests))
	for i, ex := range r.Requests {
		body := string(ex.Request)
		if len(body) > 1500 {
			body = body[:1500] + "…"
		}
		fmt.Fprintf(w, "  %d: %s\n", i+1, body)
	}
	if r.DOM != "" {
		fmt.Fprintf(w, "chat view after the test message (for answer.user, answer.selector, answer.text, answer.done):\n%s\n", r.DOM)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
