// Package editor owns the editor's processes: code-server started in a
// process group of its own with its own user-data, HOME, XDG folders and
// TMPDIR (Start, Config; the environment comes from package procenv),
// its user settings (DefaultSettings, and the languages whose built-ins
// set defaults of their own), the built-in extensions it skips and the
// folder of links that leaves them unscanned, the hashed login password
// (SharePassword), the plugins installed into an extensions folder from
// a folder or a .vsix (Install) and their manifests, the files and
// keybindings an adapter writes into an editor before it starts
// (Config.WriteFiles), the packages a plugin requires without shipping
// them (CheckModules) and the activation failures its extension hosts
// log (Editor.Failed, ActivationError).
//
// It knows no browser and no window: it never drives the workbench, and
// what an editor shows is package workbench's to read. It does not
// decide how many editors a run has, when one is restarted or which
// simulator uses which: that is the simulator slot's (package driver).
package editor
