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
	"dialogfarm/driver/workbench"
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
		Short: "Find a plugin's chat: its frames, elements, the input and way that send a test message, the answer; draft its adapter",
		Long: `probe starts the editor with a plugin no adapter describes yet and opens its
view. It lists the view's frames and its interactive and custom elements
(through open shadow roots: "host >>> inner"), ranks its text inputs (rich
editors and textareas before search boxes, file inputs and hidden fields; a
label that speaks of asking or chat; wide and low in the view), and tries
the best with Enter, Ctrl+Enter and send-like buttons, then after picking
each option of the view's drop-downs, until a request reaches the capture
endpoint. Each try is bounded (--attempt-timeout), and every try is printed.
Then it watches the answer (where it shows, whether it is rendered from
markdown, what marks its end) and the requests that follow it (titles).

Point the plugin at the capture endpoint with --setting (workspace settings)
or --file (a file written before the editor starts, e.g. a providers JSON in
its global storage), with the placeholders of adapter files: {{capture_url}},
its parts {{capture_origin}}, {{capture_host}}, {{capture_port}},
{{capture_path}}, and {{secret}}, {{session}}, {{user_data}}, {{home}},
{{extension_id}}.

--write-adapter FILE writes a draft adapter from what it saw, which
"adapters validate" accepts; comments say what each part rests on and what
is left to check (TODO).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.probe(cmd.Context()) },
	}
	pf := probe.Flags()
	pf.String("extension", "", "the plugin: an unpacked extension folder or a .vsix (required)")
	pf.StringArray("setting", nil, "a setting that points the plugin at dialogfarm, KEY=VALUE (VALUE as JSON if it parses, with placeholders such as {{capture_url}}); repeatable")
	pf.StringArray("file", nil, "a file written under the editor's user-data folder before it starts, PATH=CONTENT or PATH=@LOCALFILE, path and content with placeholders (e.g. 'User/globalStorage/{{extension_id}}/providers.json=@providers.json'); repeatable")
	pf.StringArray("home-file", nil, "like --file, under the simulator's HOME folder (for a plugin that reads ~/.something); repeatable")
	pf.String("message", "Hello from dialogfarm probe", "test message typed into the view (empty: none)")
	pf.Duration("attempt-timeout", workbench.DefaultProbeAttempt, "longest wait for each try: typing the test message, then its request")
	pf.String("write-adapter", "", "write a draft adapter YAML from what the probe saw to this file")
	pf.String("out", "", "folder for the editor's files (default: a temporary folder, removed after)")
	pf.Bool("json", false, "print the report as JSON")
	addToolFlags(probe)
	cmd.AddCommand(list, validate, probe)
	return cmd
}

// liveRun prepares a one-session run in out (a temporary folder when
// empty) with a capture endpoint answering with r (the offline stand-in
// when nil).
func (a *app) liveRun(ctx context.Context, out string, adapters []*adapter.Adapter, r capture.Responder) (driver.RunConfig, *capture.Server, func(), error) {
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
	if r == nil {
		r = capture.Offline{}
	}
	srv, err := capture.Listen(ctx, cc, r, nil, a.log)
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
	rc, srv, done, err := a.liveRun(ctx, a.v.GetString("out"), []*adapter.Adapter{ad}, nil)
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
	var files []adapter.File
	for _, flag := range []string{"file", "home-file"} {
		for _, kv := range a.v.GetStringSlice(flag) {
			f, err := probeFile(flag, kv)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
	}
	draft := a.v.GetString("write-adapter")
	rc, srv, done, err := a.liveRun(ctx, a.v.GetString("out"), nil, probeResponder())
	if err != nil {
		return err
	}
	defer done()
	pc := driver.ProbeConfig{Extension: ext, Settings: settings, Files: files, Message: a.v.GetString("message"), Attempt: a.v.GetDuration("attempt-timeout")}
	rep, err := driver.Probe(ctx, rc, pc, srv, a.log)
	if a.v.GetBool("json") {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(rep); jerr != nil {
			return jerr
		}
	} else {
		printProbe(a.stdout, rep)
	}
	if err != nil || draft == "" {
		return err
	}
	data, derr := workbench.DraftAdapter(rep, draft)
	if data != nil {
		if werr := os.WriteFile(draft, data, 0o644); werr != nil {
			return fmt.Errorf("probe: write the draft adapter: %w", werr)
		}
		fmt.Fprintf(a.stderr, "draft adapter written to %s\n", draft)
	}
	return derr
}

// probeFile reads a --file or --home-file value, PATH=CONTENT or
// PATH=@LOCALFILE.
func probeFile(flag, kv string) (adapter.File, error) {
	path, content, ok := strings.Cut(kv, "=")
	if !ok || path == "" {
		return adapter.File{}, fmt.Errorf("probe: --%s %q: want PATH=CONTENT or PATH=@LOCALFILE", flag, kv)
	}
	if local, ok := strings.CutPrefix(content, "@"); ok {
		data, err := os.ReadFile(local)
		if err != nil {
			return adapter.File{}, fmt.Errorf("probe: --%s %s: %w", flag, path, err)
		}
		content = string(data)
	}
	f := adapter.File{Path: path, Content: content}
	if flag == "home-file" {
		f.Root = adapter.RootHome
	}
	return f, nil
}

// probeResponder answers the probe's requests: a streamed (chat) request
// with a short markdown answer (bold, inline code, a fenced block) from
// which the probe tells whether the view renders markdown; any other with
// a short title. Its answers are placeholders, never training data.
func probeResponder() capture.Responder {
	return capture.ResponderFunc(func(ctx context.Context, req capture.Request) (capture.Answer, error) {
		ans := capture.Answer{Responder: "probe", Model: "probe", Offline: true, Text: "Probe title"}
		if req.Stream {
			ans.Text = fmt.Sprintf("Probe answer %d. **Bold**, `a < b` and a block:\n\n```text\n<probe> & done\n```\n", req.Seq)
		}
		return ans, ctx.Err()
	})
}

func printProbe(w io.Writer, r workbench.ProbeReport) {
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
	fmt.Fprintln(w, "elements (custom elements with their shadow root; inside one: HOST >>> INNER):")
	for _, e := range r.Elements {
		fmt.Fprintf(w, "  %-16s %-48s %q", e.Kind, e.Selector, e.Label)
		if e.Shadow != "" {
			fmt.Fprintf(w, " shadow %s", e.Shadow)
		}
		if e.Disabled {
			fmt.Fprint(w, " disabled")
		}
		if e.Hidden {
			fmt.Fprint(w, " hidden")
		}
		if len(e.Options) > 0 {
			fmt.Fprintf(w, " value %q options %q", e.Value, e.Options)
		}
		fmt.Fprintln(w)
	}
	if len(r.Inputs) > 0 {
		fmt.Fprintln(w, "text inputs, best first:")
		for _, in := range r.Inputs {
			state := ""
			if !in.Visible {
				state += " hidden"
			}
			if !in.Enabled {
				state += " disabled"
			}
			fmt.Fprintf(w, "  %4d %-15s %-48s %q%s   (%s)\n", in.Score, in.Kind, in.Selector, in.Label, state, in.Why)
		}
	}
	if len(r.Attempts) > 0 {
		fmt.Fprintln(w, "tries:")
		for _, a := range r.Attempts {
			fmt.Fprintf(w, "  %-40s %-50s %5.1fs  %s\n", a.Input, a.Method, a.Seconds, a.Outcome)
		}
	}
	if r.Sent != "" {
		fmt.Fprintf(w, "test message sent by: %s\n", r.Sent)
	}
	for _, s := range r.Setup {
		if s.Select != nil {
			fmt.Fprintf(w, "it went out only after: select %s = %s   (a setup step)\n", s.Select.Selector, s.Select.Value)
		}
	}
	fmt.Fprintf(w, "requests (%d):\n", len(r.Requests))
	for i, ex := range r.Requests {
		body := string(ex.Request)
		if len(body) > 1500 {
			body = body[:1500] + "…"
		}
		what := "after the answer"
		if i == r.Chat {
			what = "the chat request"
		}
		fmt.Fprintf(w, "  %d (%s): %s\n", i+1, what, body)
	}
	if o := r.Observed; o != nil {
		fmt.Fprintf(w, "answer: user %q, selector %q, text %q, compare %s, done %s\n", o.User, o.Answer, o.Text, o.Compare, doneString(o.Done))
		for _, e := range o.Evidence {
			fmt.Fprintf(w, "  %s\n", e)
		}
	} else if r.DOM != "" {
		fmt.Fprintf(w, "chat view after the test message (for answer.user, answer.selector, answer.text, answer.done):\n%s\n", r.DOM)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// doneString writes a done condition as its adapter field.
func doneString(d adapter.Done) string {
	switch {
	case d.Attribute != nil:
		return fmt.Sprintf("attribute %s in %q", d.Attribute.Name, d.Attribute.Values)
	case d.Appears != "":
		return "appears " + d.Appears
	case d.Disappears != "":
		return "disappears " + d.Disappears
	case d.Enabled != "":
		return "enabled " + d.Enabled
	default:
		return fmt.Sprintf("stable_ms %d", d.StableMS)
	}
}
