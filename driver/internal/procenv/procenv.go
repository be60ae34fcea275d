// Package procenv builds the environment of every process the driver
// starts (code-server, its extension installer, Chromium): an allow-list
// of the user's variables, and HOME, the XDG folders and TMPDIR of the
// process's own. It owns nothing else: it starts no process and knows
// neither the editor nor the browser.
package procenv

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"dialogfarm/internal/runfiles"
)

// inherited names the only variables code-server and Chromium inherit
// from dialogfarm's environment. It is an allow-list: API keys, tokens,
// proxy URLs with credentials, cloud credentials and anything else a
// user's shell holds never reach the editor, its extension hosts (and so
// the plugin and any code an input repository manages to run) or the
// browser.
var inherited = []string{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "USER", "LOGNAME"}

// displayVars are inherited in addition by a browser that is not
// headless.
var displayVars = []string{"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR"}

// Isolated returns a process environment built from the allow-list
// (with the display's variables too when display is set: a browser that
// is not headless), with HOME and the XDG folders inside dir (created
// 0700), so the process reads no dotfiles of the user's, and TMPDIR a
// private folder of this run folder's under the system's temporary
// folder (see shortTempDir).
func Isolated(dir string, display bool) ([]string, error) {
	tmp, err := shortTempDir(dir)
	if err != nil {
		return nil, fmt.Errorf("isolated environment: %w", err)
	}
	own := [][2]string{
		{"HOME", Home(dir)},
		{"XDG_CONFIG_HOME", filepath.Join(dir, "xdg", "config")},
		{"XDG_DATA_HOME", filepath.Join(dir, "xdg", "data")},
		{"XDG_CACHE_HOME", filepath.Join(dir, "xdg", "cache")},
		{"XDG_STATE_HOME", filepath.Join(dir, "xdg", "state")},
		{"TMPDIR", tmp},
	}
	var env []string
	for _, kv := range own {
		if err := runfiles.MkdirAll(kv[1]); err != nil {
			return nil, fmt.Errorf("isolated environment: %w", err)
		}
		env = append(env, kv[0]+"="+kv[1])
	}
	hasLang := false
	names := slices.Clone(inherited)
	if display {
		names = append(names, displayVars...)
	}
	for _, name := range names {
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

// Home is the HOME of the processes started for folder dir (and of their
// children: an editor's extension hosts, so its plugins).
func Home(dir string) string { return filepath.Join(dir, "home") }

// shortTempDir is the temporary folder of the processes started for run
// folder dir: <system temp>/dialogfarm-<uid>/<hash of dir>, each level
// 0700 and owned by this user. It is short on purpose: Chromium and
// code-server put Unix sockets in TMPDIR, and a socket path may not exceed
// 107 bytes, which a TMPDIR inside a deep run folder soon does ("Socket
// path too long" kills Chromium at launch). The same run folder gets the
// same folder again, so restarts do not leave new ones behind.
func shortTempDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	base := filepath.Join(os.TempDir(), fmt.Sprintf("dialogfarm-%d", os.Getuid()))
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	// A folder someone else made (or a symlink planted) in a shared /tmp
	// is refused rather than used.
	info, err := os.Lstat(base)
	if err != nil {
		return "", err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || info.Mode().Perm() != 0o700 || !ok || int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("%s is not a private folder of this user (mode %s): remove it", base, info.Mode())
	}
	sum := sha256.Sum256([]byte(abs))
	tmp := filepath.Join(base, hex.EncodeToString(sum[:6]))
	if err := runfiles.MkdirAll(tmp); err != nil {
		return "", err
	}
	return tmp, nil
}
