package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"dialogfarm/dialog"
	"dialogfarm/internal/runfiles"
)

// alive reports whether the page still evaluates script.
func (w *window) alive(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := w.eval(ctx, `() => 1`)
	return err == nil
}

// jsFailureDOM collects the parts of the workbench that explain a failure:
// what has focus, the quick input, notifications, the status bar and the
// active editor's tab.
const jsFailureDOM = `() => {
	const clip = (s) => s && s.length > 20000 ? s.slice(0, 20000) + '<!-- clipped -->' : (s || '');
	const out = [];
	const add = (name, el) => { if (el) out.push('<!-- ' + name + ' -->\n' + clip(el.outerHTML)); };
	add('active element', document.activeElement);
	add('quick input', document.querySelector('.quick-input-widget'));
	add('notifications', document.querySelector('.notifications-toasts'));
	add('dialog', document.querySelector('.monaco-dialog-box'));
	add('active tab', document.querySelector('.editor-group-container.active .tab.active'));
	add('status bar', document.querySelector('#workbench\\.parts\\.statusbar'));
	return out.join('\n\n');
}`

// SaveArtifacts writes into dir what a person would want to see about
// the failed dialogue d: a screenshot, the step log, and DOM snippets of
// the workbench and the chat view.
func (s *Session) SaveArtifacts(ctx context.Context, dir string, d dialog.Dialogue) error {
	if err := runfiles.MkdirAll(dir); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	var errs []string
	if png, err := s.win.screenshot(ctx); err == nil {
		if err := runfiles.WriteFile(filepath.Join(dir, "screenshot.png"), png); err != nil {
			errs = append(errs, err.Error())
		}
	} else {
		errs = append(errs, "screenshot: "+err.Error())
	}
	log := struct {
		Config     string                `json:"config"`
		FailedStep string                `json:"failed_step"`
		Error      string                `json:"error"`
		Setup      []dialog.StepTiming   `json:"setup_steps"`
		Turns      [][]dialog.StepTiming `json:"turn_steps"`
	}{Config: d.ConfigID, FailedStep: d.FailedStep, Error: d.Error, Setup: d.Setup}
	for _, t := range d.Turns {
		log.Turns = append(log.Turns, t.Steps)
	}
	data, _ := json.MarshalIndent(log, "", "  ")
	if err := runfiles.WriteFile(filepath.Join(dir, "steps.json"), data); err != nil {
		errs = append(errs, err.Error())
	}
	var dom strings.Builder
	if res, err := s.win.eval(ctx, jsFailureDOM); err == nil {
		dom.WriteString(res.Str())
	} else {
		errs = append(errs, "dom: "+err.Error())
	}
	if s.last != nil {
		if chat := s.win.chatDOM(ctx, uiOf(s.last)); chat != "" {
			dom.WriteString("\n\n<!-- chat view -->\n")
			dom.WriteString(chat)
		}
	}
	if err := runfiles.WriteFile(filepath.Join(dir, "dom.html"), []byte(dom.String())); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("save artifacts in %s: %s", dir, strings.Join(errs, "; "))
	}
	return nil
}
