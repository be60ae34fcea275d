// Package workbench owns what happens inside one simulator's window: the
// code-server workbench driven the way a developer drives it (keys, typed
// text, mouse) and read from its DOM, never through the editor's API.
//
// Its parts:
//
//   - A window's waits and actions (window.go: waits that poll in the
//     page, keys, text, clicks; keys.go: a US keyboard), and the
//     workbench's own: logging in (login.go), the workbench and the
//     plugin ready (ready.go), Quick Open, the command palette, the
//     context menu, the status bar and Shift+click selections
//     (workbench.go), scrolling a line into view (scroll.go), and the
//     file's text as the editor shows it (positions.go).
//   - The plugin's chat view, found only through its adapter
//     (plugin.go), its selectors reaching into open shadow roots
//     (deep.go): shown, its input, an answer marked done, the setup
//     steps an adapter asks for.
//   - One dialogue (Session.Drive): the setup steps of a chat config (open
//     the workspace and the file, place the cursor, select, trigger;
//     setup.go), each turn's query typed and sent, its answer waited for
//     and matched with the request the capture endpoint took (session.go,
//     exchanges.go), each a named Step with a timeout (steps.go), the
//     turns windows sharing a renderer take at their steps (uiturn.go),
//     and what a failed dialogue leaves to look at (artifacts.go).
//   - The live checks that use a window: an adapter's selectors
//     (Session.Validate), a plugin no adapter describes yet
//     (Session.Probe: probe*.go) and the adapter drafted from what it
//     found (DraftAdapter), and showing a plugin's chat view for the
//     doctor (Session.OpenChat).
//
// It starts and stops no process and opens no window: the window (a
// browser.Page) and the editor it shows (Editor: its address, password
// and activation failure) are given to NewSession by the simulator slot
// that owns them (package driver), which also decides which config a
// session drives next, when its window is replaced (ReplaceWindow) and
// where records and failure artifacts go. It reads no records and no run
// folder.
package workbench
