package driver

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Recycle says when a simulator's window is replaced by a fresh one
// between two dialogues, so that a long run's windows do not grow without
// bound: the new window loads the workbench afresh, with its own extension
// host, and the old one's memory goes back to the machine.
type Recycle struct {
	// After is how many dialogues a window drives before it is replaced
	// (0: never by count).
	After int
	// HeapMiB is the window's JavaScript heap in use, read after each
	// dialogue, above which it is replaced before the next one (0: never
	// by memory). A fresh workbench uses well under 100 MiB. Windows that
	// share a renderer process (browser.Config.RendererProcesses) share
	// its heap, and each counts an equal share of it.
	HeapMiB int
}

// DefaultRecycle replaces a window whose heap passed 1 GiB: a guard
// against a leak in the workbench or a plugin, which a healthy window
// never reaches.
func DefaultRecycle() Recycle { return Recycle{HeapMiB: 1024} }

// Validate rejects negative bounds.
func (c Recycle) Validate() error {
	if c.After < 0 || c.HeapMiB < 0 {
		return fmt.Errorf("recycle: after %d dialogues, heap %d MiB: want 0 (never) or more", c.After, c.HeapMiB)
	}
	return nil
}

// windowUse is what a window has done since it was opened, for Recycle.
type windowUse struct {
	dialogues int
	heapMiB   float64
}

// reason is why the window is due for replacement, or "".
func (u windowUse) reason(c Recycle) string {
	switch {
	case c.After > 0 && u.dialogues >= c.After:
		return fmt.Sprintf("it drove %d dialogues (recycle after %d)", u.dialogues, c.After)
	case c.HeapMiB > 0 && u.heapMiB > float64(c.HeapMiB):
		return fmt.Sprintf("its JavaScript heap is %.0f MiB (recycle above %d MiB)", u.heapMiB, c.HeapMiB)
	}
	return ""
}

// used counts a dialogue on the slot's window and, after one that
// passed, reads its heap when a memory bound is set (after a failure the
// window may not answer; refresh deals with it, and the next pass reads).
func (r *Runner) used(ctx context.Context, sl *slot, passed bool) {
	sl.use.dialogues++
	if r.cfg.Recycle.HeapMiB == 0 || !passed {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if used, err := sl.sess.Page().HeapUsed(ctx); err == nil {
		sl.use.heapMiB = used / (1 << 20) / float64(r.windowsPerRenderer())
		sl.log.Debug("window heap", zap.Float64("mib", sl.use.heapMiB), zap.Int("dialogues", sl.use.dialogues))
	}
}

// heapMiBPerWindow is the V8 heap a renderer process gets per window that
// shares it: about what low-end device mode gives one window's process.
const heapMiBPerWindow = 256

// windowsPerRenderer is how many windows share a renderer process when
// the windows are split evenly (Chromium places a new window in any of
// them, so one can hold more): a window's HeapUsed reads the whole
// process's V8 heap, and its share of it is what HeapMiB bounds.
func (r *Runner) windowsPerRenderer() int {
	if p := r.cfg.Browser.RendererProcesses; p > 0 && r.cfg.Sessions > p {
		return (r.cfg.Sessions + p - 1) / p
	}
	return 1
}

// sizeRenderers sets the renderer processes the run's windows share
// (browser.Config.Renderers) and gives each heapMiBPerWindow for every
// window it holds, unless the config sets a heap limit.
func (r *Runner) sizeRenderers() {
	r.cfg.Browser.RendererProcesses = r.cfg.Browser.Renderers(r.cfg.Sessions)
	if n := r.windowsPerRenderer(); n > 1 && r.cfg.Browser.RendererHeapMiB == 0 {
		r.cfg.Browser.RendererHeapMiB = n * heapMiBPerWindow
	}
}

// recycle replaces the slot's window with a fresh one when Recycle
// says it is due; the next dialogue loads its workspace.
func (r *Runner) recycle(ctx context.Context, sl *slot) error {
	why := sl.use.reason(r.cfg.Recycle)
	if why == "" {
		return nil
	}
	sl.log.Info("replacing the window with a fresh one", zap.String("why", why))
	if err := sl.sess.ReplaceWindow(ctx, r.reopenWindow); err != nil {
		return fmt.Errorf("replace the window (%s): %w", why, err)
	}
	sl.use = windowUse{}
	r.recycled.Add(1)
	return nil
}

// Recycled is how many windows this Runner replaced under Recycle.
func (r *Runner) Recycled() int { return int(r.recycled.Load()) }
