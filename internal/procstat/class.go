package procstat

import (
	"strings"

	"github.com/prometheus/procfs"
)

// Class is what a process of the editor or the browser is, for a
// breakdown of their CPU and memory; its value is a short name fit for a
// metric's label.
type Class string

// The classes: Chromium's processes by their --type, code-server's by
// their command line.
const (
	ChromiumBrowser  Class = "chromium-browser"
	ChromiumRenderer Class = "chromium-renderer"
	ChromiumGPU      Class = "chromium-gpu"
	// ChromiumForked is Chromium's zygotes and utility processes, and a
	// renderer read before it replaced the zygote's command line with
	// its own: ask again for a process of this class.
	ChromiumForked   Class = "chromium-utility"
	TypeScriptServer Class = "typescript-server"
	ExtensionHost    Class = "extension-host"
	FileWatcher      Class = "file-watcher"
	LanguageServers  Class = "language-servers"
	CodeServerMain   Class = "code-server-main"
	CodeServerOther  Class = "code-server-other"
)

// Title is the class's name in a report.
func (c Class) Title() string {
	switch c {
	case ChromiumBrowser:
		return "Chromium browser process"
	case ChromiumRenderer:
		return "Chromium renderers"
	case ChromiumGPU:
		return "Chromium GPU process"
	case ChromiumForked:
		return "Chromium utility and zygote"
	case TypeScriptServer:
		return "TypeScript server"
	case ExtensionHost:
		return "extension host"
	case FileWatcher:
		return "file watcher"
	case LanguageServers:
		return "language servers (JSON, CSS, HTML, ...)"
	case CodeServerMain:
		return "code-server main"
	}
	return "code-server other"
}

// Final reports whether the class c of process pid (p) can no longer
// change. A forked child shows its parent's command line until it execs
// (and none while it does), so a class its parent may have is asked
// again: Chromium's utility class (a zygote's child), the browser's class
// in any process but the browser's own (browser, the tree's root; under
// load a sampler caught the browser's child before its exec and counted
// a renderer as the browser for good), code-server's main class in any
// process but its group's leader, and code-server's other class.
func Final(c Class, pid int, p Proc, browser int) bool {
	switch c {
	case ChromiumForked, CodeServerOther:
		return false
	case ChromiumBrowser:
		return pid == browser
	case CodeServerMain:
		return pid == p.PGrp
	}
	return true
}

// ClassOf names what process pid is, from its command line: one of
// Chromium's when browser is set (it is in the browser's tree), else one
// of code-server's.
func ClassOf(pid int, browser bool) Class {
	var c string
	if p, err := procfs.NewProc(pid); err == nil {
		args, _ := p.CmdLine()
		c = strings.Join(args, " ")
	}
	if browser {
		switch {
		case c == "":
			// Between fork and exec, or exiting, a process shows no
			// command line (CI caught a sampler there and counted a
			// renderer as the browser process for good): ask again.
			return ChromiumForked
		case strings.Contains(c, "--type=renderer"):
			return ChromiumRenderer
		case strings.Contains(c, "--type=gpu-process"):
			return ChromiumGPU
		case strings.Contains(c, "--type="):
			return ChromiumForked
		}
		return ChromiumBrowser
	}
	switch {
	case strings.Contains(c, "tsserver"), strings.Contains(c, "typingsInstaller"):
		return TypeScriptServer
	case strings.Contains(c, "extensionHost"):
		return ExtensionHost
	case strings.Contains(c, "watcher"), strings.Contains(c, "fileWatcher"):
		return FileWatcher
	case strings.Contains(c, "LanguageServer"), strings.Contains(c, "ServerMain"):
		return LanguageServers
	case strings.Contains(c, "out/node/entry"), strings.Contains(c, "code-server.sh"):
		return CodeServerMain
	}
	return CodeServerOther
}
