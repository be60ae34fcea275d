package driver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"dialogfarm/adapter"
	"dialogfarm/driver/editor"
	"dialogfarm/driver/workbench"
)

// ProbeConfig says what `adapters probe` looks at.
type ProbeConfig struct {
	// Extension is the plugin: an unpacked folder or a .vsix.
	Extension string
	// Settings point the plugin at the capture endpoint, with the
	// placeholders of adapter files ({{capture_url}}, {{secret}}, ...).
	Settings map[string]any
	// Files are written before the editor starts, as an adapter's files:
	// (a providers file in the plugin's global storage, a config file in
	// the home folder), with the same placeholders.
	Files []adapter.File
	// Message is the test message typed into the view; empty: none.
	Message string
	// Attempt bounds each try at sending it (DefaultProbeAttempt if 0).
	Attempt time.Duration
}

type contributes struct {
	Publisher   string `json:"publisher"`
	Name        string `json:"name"`
	Contributes struct {
		ViewsContainers struct {
			Activitybar []struct {
				Title string `json:"title"`
			} `json:"activitybar"`
		} `json:"viewsContainers"`
		Commands []struct {
			Command string `json:"command"`
			Title   string `json:"title"`
		} `json:"commands"`
		Keybindings []struct {
			Command string `json:"command"`
			Key     string `json:"key"`
		} `json:"keybindings"`
		Menus map[string][]struct {
			Command string `json:"command"`
		} `json:"menus"`
	} `json:"contributes"`
}

// probeAdapter is the adapter a probe drives with: only what the manifest
// tells, default webview frames, any document counts as ready.
func probeAdapter(pc ProbeConfig) (*adapter.Adapter, contributes, error) {
	var m contributes
	abs, err := filepath.Abs(pc.Extension)
	if err != nil {
		return nil, m, err
	}
	a := &adapter.Adapter{Name: "probe", Source: "probe", Settings: pc.Settings, Files: pc.Files}
	if strings.HasSuffix(abs, ".vsix") {
		a.Extension.VSIX = abs
	} else {
		a.Extension.Folder = abs
	}
	if err := editor.DecodeManifest(a, &m); err != nil {
		return nil, m, fmt.Errorf("probe: %w", err)
	}
	a.Extension.ID = m.Publisher + "." + m.Name
	if len(m.Contributes.ViewsContainers.Activitybar) > 0 {
		a.Open.ActivityBar = m.Contributes.ViewsContainers.Activitybar[0].Title
	}
	a.Webview = adapter.Webview{Frames: []string{`iframe.webview.ready[src*="extensionId={{extension_id}}"]`, `iframe#active-frame`}, Ready: "body"}
	// A file that holds a per-session placeholder is written for the
	// probe's session alone: in an editor of its own.
	if a.CheckIsolation(adapter.IsolationWindow) != nil {
		a.Isolation = adapter.IsolationEditor
	}
	return a, m, nil
}

// Probe starts the editor with a plugin no adapter describes yet, opens
// its view and reports the frame chain, the interactive and custom
// elements with stable selectors, the text inputs ranked, and, with a test
// message, every try at sending it (each input from the best, with Enter,
// Ctrl+Enter and send-like buttons, then after picking each option of the
// view's drop-downs), each bounded by pc.Attempt, until a request arrives;
// then what the view shows of the answer and when it is done, and the
// requests that follow it.
func Probe(ctx context.Context, rc RunConfig, pc ProbeConfig, capture workbench.Exchanges, log *zap.Logger) (workbench.ProbeReport, error) {
	a, m, err := probeAdapter(pc)
	if err != nil {
		return workbench.ProbeReport{}, err
	}
	rep := workbench.ProbeReport{ExtensionID: a.Extension.ID, Extension: pc.Extension, Frames: a.Frames(), Settings: pc.Settings, Files: pc.Files,
		Isolation: a.Isolation, Message: pc.Message, Chat: -1}
	for _, c := range m.Contributes.ViewsContainers.Activitybar {
		rep.ActivityBar = append(rep.ActivityBar, c.Title)
	}
	keys, menu := map[string]string{}, map[string]bool{}
	for _, k := range m.Contributes.Keybindings {
		keys[k.Command] = k.Key
	}
	for _, it := range m.Contributes.Menus["editor/context"] {
		menu[it.Command] = true
	}
	for _, c := range m.Contributes.Commands {
		rep.Commands = append(rep.Commands, workbench.ProbeCommand{ID: c.Command, Title: c.Title, Keybinding: keys[c.Command], ContextMenu: menu[c.Command]})
	}
	if a.Open.ActivityBar == "" {
		return rep, errors.New("probe: the plugin contributes no activity bar container; its view cannot be opened by the probe")
	}
	rc.Adapters = []*adapter.Adapter{a}
	r := NewRunner(rc, capture, nil, log)
	if err := r.Start(ctx); err != nil {
		return rep, err
	}
	defer r.Stop()
	ws, err := workbench.ProbeWorkspace(r.cfg.Out)
	if err != nil {
		return rep, err
	}
	s, err := r.NewSession(ctx, "probe")
	if err != nil {
		return rep, err
	}
	return rep, s.Probe(ctx, a, ws, pc.Message, pc.Attempt, &rep)
}
