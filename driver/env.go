package driver

import (
	"fmt"
	"os"
	"path/filepath"

	"dialogfarm/internal/runfiles"
)

// inheritedEnv names the only variables code-server and Chromium inherit
// from dialogfarm's environment. It is an allow-list: API keys, tokens,
// proxy URLs with credentials, cloud credentials and anything else a
// user's shell holds never reach the editor, its extension hosts (and so
// the plugin and any code an input repository manages to run) or the
// browser.
var inheritedEnv = []string{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "USER", "LOGNAME"}

// displayEnv is inherited in addition by a browser that is not headless.
var displayEnv = []string{"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR"}

// isolatedEnv returns a process environment built from the allow-list,
// with HOME, the XDG folders and TMPDIR inside dir (created 0700), so the
// process writes nothing outside the run folder and reads no dotfiles of
// the user's.
func isolatedEnv(dir string, extra ...string) ([]string, error) {
	own := [][2]string{
		{"HOME", filepath.Join(dir, "home")},
		{"XDG_CONFIG_HOME", filepath.Join(dir, "xdg", "config")},
		{"XDG_DATA_HOME", filepath.Join(dir, "xdg", "data")},
		{"XDG_CACHE_HOME", filepath.Join(dir, "xdg", "cache")},
		{"XDG_STATE_HOME", filepath.Join(dir, "xdg", "state")},
		{"TMPDIR", filepath.Join(dir, "tmp")},
	}
	var env []string
	for _, kv := range own {
		if err := runfiles.MkdirAll(kv[1]); err != nil {
			return nil, fmt.Errorf("isolated environment: %w", err)
		}
		env = append(env, kv[0]+"="+kv[1])
	}
	hasLang := false
	for _, name := range append(append([]string(nil), inheritedEnv...), extra...) {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
			hasLang = hasLang || name == "LANG"
		}
	}
	if !hasLang {
		env = append(env, "LANG=C.UTF-8")
	}
	return env, nil
}
