// Package buildinfo says which dialogfarm made a file: the module
// version, VCS revision and Go version the binary was built from, as the
// Go toolchain recorded them. `dialogfarm --version` prints it, and the
// dataset card, stats.json and the fidelity report carry it.
package buildinfo

import (
	"fmt"
	"runtime/debug"
)

// Version is "MODULE-VERSION (revision REV[+dirty], TIME) GO-VERSION", or
// "unknown (no build information)".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		v += fmt.Sprintf(" (revision %s%s, %s)", rev, dirty, at)
	}
	return v + " " + bi.GoVersion
}
