package editor

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"dialogfarm/driver/internal/procenv"
	"dialogfarm/driver/internal/tether"
	"dialogfarm/internal/runfiles"
)

// Config says how to start code-server.
type Config struct {
	// Bin runs code-server (setup writes tools/code-server.sh, which runs it
	// under Node 24).
	Bin string
	// ExtensionsDir holds the plugin under simulation.
	ExtensionsDir string
	// Dir is the folder for everything the editor writes: user data, XDG
	// config/data/cache, TMPDIR and its log. Isolated per run.
	Dir string
	// Settings are written as the user's settings.json, on top of
	// DefaultSettings.
	Settings map[string]any
	// SkipBuiltin are built-in extensions code-server does not load
	// (VSCODE_SKIP_BUILTIN_EXTENSIONS); DefaultConfig sets
	// SkippedBuiltins; a run keeps those an adapter says its plugin
	// needs.
	SkipBuiltin []string
	// Builtins is code-server's own folder of built-in extensions. When
	// set, code-server reads its built-ins from a folder of links to
	// those that SkipBuiltin does not name (linkBuiltins), so the skipped
	// ones are not even scanned.
	Builtins string
	// StartTimeout bounds the wait for the HTTP endpoint to answer.
	StartTimeout time.Duration
	// Password is what code-server's login page asks for; empty draws a
	// random one. code-server gets its argon2id hash through a 0600 config
	// file in Dir, never through the environment or the command line.
	Password string
	// Plugins are the extensions (publisher.name) whose failure to
	// activate the editor reports (Editor.Failed), from its extension
	// hosts' logs.
	Plugins []string
	// passwordHash is Password's hash (SharePassword), kept across
	// restarts: the browser's session cookie is the hash, so a
	// restarted code-server with the same hash accepts it.
	passwordHash string
}

// SharePassword draws a password when c has none and hashes it once, so
// that every editor started from c (or from a copy of it: a restart, an
// editor per simulator) accepts the session cookie a browser got from any
// of them, and its windows need not log in again.
func (c *Config) SharePassword() error {
	if c.Password == "" {
		c.Password = rand.Text()
	}
	h, err := hashPassword(c.Password)
	if err != nil {
		return err
	}
	c.passwordHash = h
	return nil
}

// DefaultConfig returns a config that uses the tools folder made by
// `make setup` under root (the repository root).
func DefaultConfig(root string) Config {
	return Config{
		Bin:           filepath.Join(root, "tools", "code-server.sh"),
		ExtensionsDir: filepath.Join(root, "tools", "extensions"),
		SkipBuiltin:   SkippedBuiltins(),
		Builtins:      builtinsFolder(root),
		StartTimeout:  60 * time.Second,
	}
}

// SkippedBuiltins are the built-in extensions with code of their own that
// a simulated developer's Q&A plugin does not use: source control and
// GitHub sign-in, task detection (it runs a repository's build files),
// debugging, language servers (TypeScript, JSON, CSS, HTML, PHP), Emmet,
// Copilot Chat, previews. Each window's extension host would otherwise load
// them, and git, GitHub, merge-conflict and Emmet activate in every window.
// Grammars, language configurations and themes have no code and stay, so
// the editor still highlights the file. A plugin that calls one of these
// (say, the git API for a diff) names it in its adapter's
// extension.needs_builtin.
func SkippedBuiltins() []string {
	return []string{
		"GitHub.copilot-chat",
		"vscode.git", "vscode.git-base", "vscode.github", "vscode.github-authentication",
		"vscode.microsoft-authentication", "vscode.merge-conflict",
		"vscode.npm", "vscode.grunt", "vscode.gulp", "vscode.jake",
		"vscode.debug-auto-launch", "vscode.debug-server-ready",
		"ms-vscode.js-debug", "ms-vscode.js-debug-companion", "ms-vscode.vscode-js-profile-table",
		"vscode.typescript-language-features", "vscode.json-language-features",
		"vscode.css-language-features", "vscode.html-language-features", "vscode.php-language-features",
		"vscode.configuration-editing", "vscode.extension-editing", "vscode.emmet",
		"vscode.references-view", "vscode.terminal-suggest", "vscode.tunnel-forwarding",
		"vscode.simple-browser", "vscode.ipynb", "vscode.media-preview",
		"vscode.markdown-language-features", "vscode.markdown-math", "vscode.mermaid-markdown-features",
	}
}

// Editor is a running code-server, started in its own process group so that
// Stop ends its extension hosts and watchers too, and killed when the
// process that started it dies.
type Editor struct {
	cfg     Config
	log     *zap.Logger
	cmd     *exec.Cmd
	url     string
	version string
	exited  chan struct{}
	exitErr error
	stopMu  sync.Mutex
	stopped bool
	watch   *activationWatch // nil when cfg.Plugins is empty
}

// ErrExited says code-server exited.
var ErrExited = errors.New("code-server exited")

// Start starts code-server on a free loopback port and waits until it
// answers HTTP. The caller must call Stop.
func Start(ctx context.Context, cfg Config, log *zap.Logger) (*Editor, error) {
	if _, err := os.Stat(cfg.Bin); err != nil {
		return nil, fmt.Errorf("start code-server: %w (run `make setup`)", err)
	}
	if cfg.Password == "" {
		cfg.Password = rand.Text()
	}
	dirs, err := editorDirs(cfg)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("start code-server: find a free port: %w", err)
	}
	version, err := editorVersion(ctx, cfg.Bin, dirs.env)
	if err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(filepath.Join(cfg.Dir, "code-server.log"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, runfiles.FileMode)
	if err != nil {
		return nil, fmt.Errorf("start code-server: %w", err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var watch *activationWatch
	if len(cfg.Plugins) > 0 {
		watch = watchActivation(filepath.Join(dirs.userData, "logs"), cfg.Plugins)
	}
	cmd := exec.Command(cfg.Bin, editorArgs(cfg, dirs, addr)...)
	cmd.Env = dirs.env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, which Stop ends; killed with this process
	// (a run or worker killed with -9 leaves no code-server behind: its
	// children exit once it has).
	proc, err := tether.Start(cmd)
	if err != nil {
		logFile.Close()
		if watch != nil {
			watch.Close()
		}
		return nil, fmt.Errorf("start code-server: %w", err)
	}
	e := &Editor{cfg: cfg, log: log, cmd: cmd, url: "http://" + addr, version: version, exited: make(chan struct{}), watch: watch}
	go func() {
		e.exitErr = proc.Err()
		logFile.Close()
		close(e.exited)
	}()
	log.Info("code-server starting", zap.String("url", e.url), zap.Int("pid", cmd.Process.Pid), zap.String("version", version))
	if err := e.waitHTTP(ctx); err != nil {
		e.Stop()
		return nil, err
	}
	return e, nil
}

// URL is the editor's base URL, e.g. http://127.0.0.1:43121.
func (e *Editor) URL() string { return e.url }

// Version is what `code-server --version` printed, e.g.
// "4.139.1 53c2f32 with Code 1.139.1".
func (e *Editor) Version() string { return e.version }

// Alive reports whether the code-server process is still running.
func (e *Editor) Alive() bool {
	select {
	case <-e.exited:
		return false
	default:
		return true
	}
}

// Exited is closed when the code-server process has exited.
func (e *Editor) Exited() <-chan struct{} { return e.exited }

// Healthy reports whether code-server is running and answers HTTP. Right
// after a crash the process may not have been reaped yet, so Alive alone
// can still say true.
func (e *Editor) Healthy(ctx context.Context) bool {
	if !e.Alive() {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/healthz", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Failed is closed once one of the editor's plugins (Config.Plugins)
// failed to activate; Err then says which and why.
func (e *Editor) Failed() <-chan struct{} {
	if e.watch == nil {
		return nil
	}
	return e.watch.Failed()
}

// Err is the *ActivationError of a plugin that failed to activate, or nil.
func (e *Editor) Err() error {
	if e.watch == nil {
		return nil
	}
	return e.watch.Err()
}

// Password is what code-server's login page accepts.
func (e *Editor) Password() string { return e.cfg.Password }

// PID is the process id of code-server (the leader of its process group).
func (e *Editor) PID() int { return e.cmd.Process.Pid }

// Stop ends code-server's whole process group and waits for it to exit.
func (e *Editor) Stop() {
	e.stopMu.Lock()
	defer e.stopMu.Unlock()
	if e.stopped {
		return
	}
	e.stopped = true
	pgid := e.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-e.exited
	}
	// Children that outlived the leader (extension hosts, watchers).
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if e.watch != nil {
		e.watch.Close()
	}
}

func (e *Editor) waitHTTP(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.StartTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/healthz", nil)
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for code-server at %s: %w (log: %s)", e.url, ctx.Err(), filepath.Join(e.cfg.Dir, "code-server.log"))
		case <-e.exited:
			return fmt.Errorf("wait for code-server at %s: %w: %v (log: %s)", e.url, ErrExited, e.exitErr, filepath.Join(e.cfg.Dir, "code-server.log"))
		case <-tick.C:
		}
	}
}

type editorPaths struct {
	userData string
	config   string // code-server's config file: auth and password
	builtins string // the folder of linked built-in extensions, if any
	env      []string
}

// editorArgs is code-server's command line, listening on addr.
func editorArgs(cfg Config, dirs editorPaths, addr string) []string {
	args := []string{
		"--config", dirs.config,
		"--auth", "password",
		"--bind-addr", addr,
		"--disable-telemetry",
		"--disable-update-check",
		"--disable-workspace-trust",
		"--disable-getting-started-override",
		"--disable-proxy",
		"--disable-file-downloads",
		"--disable-file-uploads",
		"--user-data-dir", dirs.userData,
		"--extensions-dir", cfg.ExtensionsDir,
	}
	if dirs.builtins != "" {
		args = append(args, "--builtin-extensions-dir", dirs.builtins)
	}
	return args
}

// editorDirs makes the isolated folders and writes the user settings.
func editorDirs(cfg Config) (editorPaths, error) {
	if cfg.Dir == "" {
		return editorPaths{}, errors.New("start code-server: Config.Dir is empty")
	}
	p := editorPaths{userData: userDataDir(cfg.Dir), config: filepath.Join(cfg.Dir, "code-server.yaml")}
	if err := runfiles.MkdirAll(filepath.Join(p.userData, "User")); err != nil {
		return p, fmt.Errorf("start code-server: %w", err)
	}
	env, err := procenv.Isolated(cfg.Dir, false)
	if err != nil {
		return p, fmt.Errorf("start code-server: %w", err)
	}
	p.env = env
	if len(cfg.SkipBuiltin) > 0 {
		p.env = append(p.env, "VSCODE_SKIP_BUILTIN_EXTENSIONS="+strings.Join(cfg.SkipBuiltin, ","))
		// Another code-server than setup's keeps all its built-ins in
		// place: the variable alone then skips them.
		if st, err := os.Stat(cfg.Builtins); err == nil && st.IsDir() {
			p.builtins = filepath.Join(cfg.Dir, "builtin-extensions")
			if err := linkBuiltins(cfg.Builtins, p.builtins, cfg.SkipBuiltin); err != nil {
				return p, fmt.Errorf("start code-server: %w", err)
			}
		}
	}
	data, err := userSettings(cfg)
	if err != nil {
		return p, fmt.Errorf("start code-server: %w", err)
	}
	if err := runfiles.WriteFile(filepath.Join(p.userData, "User", "settings.json"), data); err != nil {
		return p, fmt.Errorf("start code-server: write settings: %w", err)
	}
	hashed := cfg.passwordHash
	if hashed == "" {
		var err error
		if hashed, err = hashPassword(cfg.Password); err != nil {
			return p, fmt.Errorf("start code-server: %w", err)
		}
	}
	// JSON is YAML: the hash is quoted whatever it holds.
	conf, _ := json.Marshal(hashed)
	if err := runfiles.WriteFile(p.config, []byte("auth: password\nhashed-password: "+string(conf)+"\n")); err != nil {
		return p, fmt.Errorf("start code-server: write its config: %w", err)
	}
	return p, nil
}

func editorVersion(ctx context.Context, bin string, env []string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("code-server --version: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.Contains(line, "with Code") {
			return line, nil
		}
	}
	return "", fmt.Errorf("code-server --version: unexpected output %q", out)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
