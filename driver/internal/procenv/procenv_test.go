package procenv

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeKeys are set in the test's environment, as a user's shell would
// hold a pool's api_key_env: none may be passed on.
var fakeKeys = map[string]string{
	"OPENAI_API_KEY":              "sk-e2e-fake-openai-key-0123456789abcdef",
	"DIALOGFARM_E2E_MEMBER_TOKEN": "hf_e2eFakeMemberToken0123456789ABCDEF",
}

func TestIsolatedIsAnAllowList(t *testing.T) {
	for k, v := range fakeKeys {
		t.Setenv(k, v)
	}
	t.Setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
	t.Setenv("TZ", "Europe/Berlin")
	t.Setenv("HOME", "/home/someone")
	t.Setenv("HTTPS_PROXY", "http://user:pass@proxy.example:3128")
	t.Setenv("PASSWORD", "code-server-would-read-this")
	t.Setenv("DISPLAY", ":0")
	dir := t.TempDir()
	env, err := Isolated(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s twice", k)
		}
		got[k] = v
	}
	for _, k := range append([]string{"HTTPS_PROXY", "PASSWORD", "DISPLAY"}, keysOf(fakeKeys)...) {
		if _, ok := got[k]; ok {
			t.Errorf("%s was passed on", k)
		}
	}
	if got["PATH"] != "/usr/local/bin:/usr/bin:/bin" || got["TZ"] != "Europe/Berlin" {
		t.Errorf("PATH %q TZ %q", got["PATH"], got["TZ"])
	}
	// TMPDIR is short (sockets go there), private, and this run folder's.
	tmp := got["TMPDIR"]
	if info, err := os.Stat(tmp); err != nil || info.Mode().Perm() != 0o700 || len(tmp)+60 > 107 {
		t.Errorf("TMPDIR %q (%d bytes): %v", tmp, len(tmp), err)
	}
	other, err := Isolated(filepath.Join(dir, "other"), false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(other, "\n"), "TMPDIR="+tmp+"\n") {
		t.Errorf("two run folders share TMPDIR %s", tmp)
	}
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"} {
		v := got[k]
		if !strings.HasPrefix(v, dir+string(filepath.Separator)) {
			t.Errorf("%s=%q, want a folder in %s", k, v, dir)
			continue
		}
		if info, err := os.Stat(v); err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v", v, err)
		}
	}

	withDisplay, err := Isolated(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(withDisplay, "\n"), "\nDISPLAY=:0") {
		t.Errorf("a browser with a window lost DISPLAY: %q", withDisplay)
	}
}

func keysOf(m map[string]string) []string { return slices.Collect(maps.Keys(m)) }
