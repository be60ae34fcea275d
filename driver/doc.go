// Package driver turns a chat config into a dialogue by driving a real
// code-server in headless Chromium, through the plugin under simulation,
// the way a developer would (keys, text, mouse), with the plugin's model
// requests answered by the capture endpoint.
//
// Its parts, each in files of its own:
//
//   - The editor's processes are package driver/editor's: code-server
//     with its own user-data, HOME, XDG folders and TMPDIR (those from
//     driver/internal/procenv), its settings, built-ins and password,
//     the plugins installed from a folder or a .vsix, the files and
//     keybindings an adapter writes into an editor, the packages a plugin
//     requires without shipping them and its activation failures. The
//     bookkeeping that ends a killed run's editors and browser is the
//     run's (stale.go, lock.go).
//   - The browser backends are package driver/browser's: Chromium
//     launched with go-rod or chromedp behind one small window interface
//     (browser.Page), and the end of its start-up.
//   - The workbench steps: a window's waits and actions (window.go,
//     workbench.go, keys.go, scroll.go, positions.go, ready.go, login.go),
//     the plugin's chat view (plugin.go), and one dialogue's steps
//     (session.go, setup.go, steps.go, exchanges.go, uiturn.go).
//   - The simulator slots (slot.go, run.go, recycle.go): a Runner owns a
//     run's browser, its editors and its slots; each slot is a window on
//     the editor every slot shares (isolation window) or a window on an
//     editor of its own (isolation editor). The farm's workers schedule
//     the configs and drive each on a slot (Runner.DriveSlot); the slot
//     recovers its editor and window between configs. There is no other
//     scheduler: `dialogfarm run`, `drive` and `worker` drive through the
//     farm (package pipeline), and so do this package's tests.
//
// Live checks of an adapter (ValidateLive), the probe of a plugin without
// one (Probe) and the doctor's activation check (CheckActivation) open a
// slot of their own.
package driver
