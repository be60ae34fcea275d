package buildinfo

import (
	"runtime"
	"strings"
	"testing"
)

// TestVersion: a test binary has build information; the version ends with
// the Go version it was built with.
func TestVersion(t *testing.T) {
	if v := Version(); !strings.HasSuffix(v, " "+runtime.Version()) {
		t.Errorf("Version() = %q, want it to end with %s", v, runtime.Version())
	}
}
