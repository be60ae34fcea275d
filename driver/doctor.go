package driver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"dialogfarm/adapter"
	"dialogfarm/driver/browser"
	"dialogfarm/driver/editor"
	"dialogfarm/driver/workbench"
)

// Finding is one prerequisite the doctor checked.
type Finding struct {
	Name    string
	Version string
	Problem string // empty when the check passed
}

// Doctor checks that everything the driver needs is installed: Chromium,
// Node 24, code-server and the plugin in the extensions folder.
func Doctor(ctx context.Context, ed editor.Config, br browser.Config, nodeBin, pluginDir string) []Finding {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tmp, err := os.MkdirTemp("", "dialogfarm-doctor-")
	if err == nil {
		defer os.RemoveAll(tmp)
	}
	env := append(os.Environ(), "XDG_CONFIG_HOME="+tmp, "XDG_DATA_HOME="+tmp, "XDG_CACHE_HOME="+tmp)
	version := func(name, bin string, args ...string) Finding {
		f := Finding{Name: name}
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			f.Problem = fmt.Sprintf("%s %s: %v (run `make setup`)", bin, strings.Join(args, " "), err)
			return f
		}
		f.Version = strings.TrimSpace(lastLine(string(out)))
		return f
	}
	var out []Finding
	out = append(out, version("chromium", br.Bin, "--version"))
	node := version("node", nodeBin, "--version")
	if node.Problem == "" && !strings.HasPrefix(node.Version, "v24.") {
		node.Problem = fmt.Sprintf("code-server 4.139 needs Node 24, %s is %s", nodeBin, node.Version)
	}
	out = append(out, node)
	out = append(out, version("code-server", ed.Bin, "--version"))
	plugin := Finding{Name: "plugin"}
	if m, err := editor.ReadPluginManifest(pluginDir); err != nil {
		plugin.Problem = err.Error()
	} else {
		plugin.Version = m.ID() + " " + m.Version
		if !installed(ed.ExtensionsDir, m) {
			plugin.Problem = fmt.Sprintf("%s is not in the extensions folder %s (run `make setup`)", m.ID(), ed.ExtensionsDir)
		}
	}
	return append(out, plugin)
}

// installed reports whether the extensions folder holds the plugin.
func installed(extDir string, m editor.PluginManifest) bool {
	entries, err := os.ReadDir(extDir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), m.ID()+"-") {
			continue
		}
		if got, err := editor.ReadPluginManifest(filepath.Join(extDir, e.Name())); err == nil && got.Version == m.Version {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Activation is how one plugin came up in the editor (CheckActivation).
type Activation struct {
	Adapter   string
	Extension string
	Seconds   float64 // from the editor's start until the chat view showed
	Err       error   // nil: it activated and its chat view showed
}

// CheckActivation starts the editor with each plugin of rc.Adapters in
// turn, as a run would (a plugin that requires packages it does not ship
// is refused first, with a *editor.MissingModulesError), loads a one-file
// workspace and opens the plugin's chat view (its activity-bar item, else
// its keybinding, else its command), which activates a plugin that waits
// for its view. A plugin that failed to activate has an *editor.ActivationError
// with the extension host's lines, reported as soon as they are logged; a
// chat view that does not show within step has the wait's error. Each
// plugin gets an editor of its own, in a folder of rc.Out named after its
// adapter: one that fails does not hide whether the others activate.
func CheckActivation(ctx context.Context, rc RunConfig, capture workbench.Exchanges, step time.Duration, log *zap.Logger) []Activation {
	var out []Activation
	for _, a := range rc.Adapters {
		one := rc
		one.Adapters, one.Out = []*adapter.Adapter{a}, filepath.Join(rc.Out, "activation-"+safeName(a.Name))
		start := time.Now()
		err := checkActivation(ctx, one, capture, step, log)
		out = append(out, Activation{Adapter: a.Name, Extension: a.Extension.ID, Seconds: time.Since(start).Seconds(), Err: err})
	}
	return out
}

// checkActivation is CheckActivation for one plugin, rc.Adapters[0].
func checkActivation(ctx context.Context, rc RunConfig, capture workbench.Exchanges, step time.Duration, log *zap.Logger) error {
	a := rc.Adapters[0]
	r := NewRunner(rc, capture, nil, log)
	if err := r.Start(ctx); err != nil {
		return err
	}
	defer r.Stop()
	ws, err := workbench.ProbeWorkspace(r.cfg.Out)
	if err != nil {
		return fmt.Errorf("check activation: %w", err)
	}
	s, err := r.NewSession(ctx, "doctor")
	if err != nil {
		return err
	}
	return s.OpenChat(ctx, a, ws, step)
}
