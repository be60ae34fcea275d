package editor

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"

	"dialogfarm/adapter"
)

// A plugin whose bundle leaves packages external (native modules above
// all: udx-native, sodium-native) and is installed without them fails to
// activate at once, and says so only in the extension host's log. What
// its scripts require can often be read before any editor starts: the
// require("x") calls with a literal name in its main script, and in the
// scripts that one requires by a relative path, outside try blocks (an
// optional dependency is required inside one). A name that is neither a
// Node built-in, nor the editor's own "vscode", nor a package the plugin
// ships (its node_modules, or, for an unpacked folder, a node_modules
// above it, as Node looks there too) makes activation fail.

// MissingModulesError names the packages a plugin requires without
// shipping them.
type MissingModulesError struct {
	Extension string          // publisher.name
	Source    string          // the folder or .vsix
	Missing   []MissingModule // in the order found
}

// MissingModule is one package a script requires and the plugin does not
// ship.
type MissingModule struct {
	Name   string // the package, e.g. udx-native
	Script string // the script requiring it, relative to the extension's folder
	Line   int
}

func (e *MissingModulesError) Error() string {
	var parts []string
	for _, m := range e.Missing {
		parts = append(parts, fmt.Sprintf("%q (%s:%d)", m.Name, m.Script, m.Line))
	}
	return fmt.Sprintf("extension %s (%s) requires packages it does not ship, so it would fail to activate with \"Cannot find module '%s'\": %s; "+
		"package them with it (for native modules, their prebuilt .node files for linux-x64) in its node_modules",
		e.Extension, e.Source, e.Missing[0].Name, strings.Join(parts, ", "))
}

// CheckModules reads the scripts of the adapter's plugin and returns a
// *MissingModulesError when they require packages it does not ship (see
// above), nil when they require none, or an error when the plugin cannot
// be read.
func CheckModules(a *adapter.Adapter) error {
	fsys, source, parents, closer, err := extensionFS(a)
	if err != nil {
		return err
	}
	defer closer()
	data, err := fs.ReadFile(fsys, "package.json")
	if err != nil {
		return fmt.Errorf("check the modules of %s: %w", a.Extension.ID, err)
	}
	var m struct {
		Main string `json:"main"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("check the modules of %s: parse package.json: %w", a.Extension.ID, err)
	}
	if m.Main == "" {
		return nil // no code in the extension host
	}
	main, ok := resolveScript(fsys, path.Clean(strings.TrimPrefix(m.Main, "./")))
	if !ok {
		return fmt.Errorf("check the modules of %s: its main script %q is not in %s", a.Extension.ID, m.Main, source)
	}
	s := moduleScan{fsys: fsys, parents: parents, seen: map[string]bool{}}
	if err := s.scan(main); err != nil {
		return fmt.Errorf("check the modules of %s: %w", a.Extension.ID, err)
	}
	if len(s.missing) == 0 {
		return nil
	}
	return &MissingModulesError{Extension: a.Extension.ID, Source: source, Missing: s.missing}
}

// extensionFS opens the plugin's files: its folder, or the extension/
// folder inside its .vsix; parents are the folders above an unpacked one.
func extensionFS(a *adapter.Adapter) (fsys fs.FS, source string, parents []string, closer func(), err error) {
	if a.Extension.Folder != "" {
		dir, err := filepath.EvalSymlinks(a.Path(a.Extension.Folder))
		if err != nil {
			return nil, "", nil, nil, fmt.Errorf("check the modules of %s: %w", a.Extension.ID, err)
		}
		for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
			parents = append(parents, p)
			if p == filepath.Dir(p) {
				break
			}
		}
		return os.DirFS(dir), dir, parents, func() {}, nil
	}
	vsix := a.Path(a.Extension.VSIX)
	z, err := zip.OpenReader(vsix)
	if err != nil {
		return nil, "", nil, nil, fmt.Errorf("check the modules of %s: %w", a.Extension.ID, err)
	}
	sub, err := fs.Sub(z, "extension")
	if err != nil {
		z.Close()
		return nil, "", nil, nil, fmt.Errorf("check the modules of %s: %w", a.Extension.ID, err)
	}
	return sub, vsix, nil, func() { z.Close() }, nil
}

// resolveScript finds the script a require of p (relative to the
// extension's folder) loads: p, p.js, p.cjs or p/index.js.
func resolveScript(fsys fs.FS, p string) (string, bool) {
	for _, c := range []string{p, p + ".js", p + ".cjs", path.Join(p, "index.js")} {
		if st, err := fs.Stat(fsys, c); err == nil && !st.IsDir() {
			return c, true
		}
	}
	return "", false
}

type moduleScan struct {
	fsys    fs.FS
	parents []string
	seen    map[string]bool
	missing []MissingModule
}

// scan reads one script, notes the packages it requires that are missing
// and scans the scripts it requires by a relative path.
func (s *moduleScan) scan(script string) error {
	if s.seen[script] || !(strings.HasSuffix(script, ".js") || strings.HasSuffix(script, ".cjs")) {
		return nil
	}
	s.seen[script] = true
	src, err := fs.ReadFile(s.fsys, script)
	if err != nil {
		return err
	}
	reqs, err := requires(src)
	if err != nil {
		return fmt.Errorf("%s: %w", script, err)
	}
	for _, r := range reqs {
		switch {
		case strings.HasPrefix(r.name, "./") || strings.HasPrefix(r.name, "../"):
			if dep, ok := resolveScript(s.fsys, path.Join(path.Dir(script), r.name)); ok {
				if err := s.scan(dep); err != nil {
					return err
				}
			}
		case builtinModule(r.name) || s.shipped(r.name):
		default:
			if !slices.ContainsFunc(s.missing, func(m MissingModule) bool { return m.Name == packageName(r.name) }) {
				s.missing = append(s.missing, MissingModule{Name: packageName(r.name), Script: script, Line: r.line})
			}
		}
	}
	return nil
}

// shipped reports whether the plugin's node_modules (or one above an
// unpacked plugin's folder) holds the package of the module name.
func (s *moduleScan) shipped(name string) bool {
	pkg := path.Join("node_modules", packageName(name))
	if _, err := fs.Stat(s.fsys, pkg); err == nil {
		return true
	}
	for _, p := range s.parents {
		if _, err := os.Stat(filepath.Join(p, filepath.FromSlash(pkg))); err == nil {
			return true
		}
	}
	return false
}

// packageName is the package of a module name: "@scope/pkg" of
// "@scope/pkg/sub", "pkg" of "pkg/sub".
func packageName(name string) string {
	parts := strings.SplitN(name, "/", 3)
	if strings.HasPrefix(name, "@") && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// nodeBuiltins are Node 24's built-in modules (require('module').builtinModules).
var nodeBuiltins = []string{"_http_agent", "_http_client", "_http_common", "_http_incoming", "_http_outgoing", "_http_server",
	"_stream_duplex", "_stream_passthrough", "_stream_readable", "_stream_transform", "_stream_wrap", "_stream_writable",
	"_tls_common", "_tls_wrap", "assert", "assert/strict", "async_hooks", "buffer", "child_process", "cluster", "console",
	"constants", "crypto", "dgram", "diagnostics_channel", "dns", "dns/promises", "domain", "events", "fs", "fs/promises",
	"http", "http2", "https", "inspector", "inspector/promises", "module", "net", "os", "path", "path/posix", "path/win32",
	"perf_hooks", "process", "punycode", "querystring", "readline", "readline/promises", "repl", "stream",
	"stream/consumers", "stream/promises", "stream/web", "string_decoder", "sys", "timers", "timers/promises", "tls",
	"trace_events", "tty", "url", "util", "util/types", "v8", "vm", "wasi", "worker_threads", "zlib"}

// builtinModule reports whether the extension host provides name itself:
// a Node built-in (with or without "node:") or the editor's API.
func builtinModule(name string) bool {
	return name == "vscode" || strings.HasPrefix(name, "node:") || slices.Contains(nodeBuiltins, name)
}

// required is one module name a script requires, and its line.
type required struct {
	name string
	line int
}

// requires lists the literal names a script passes to require(...), or
// imports from, outside the body of a try statement.
func requires(src []byte) ([]required, error) {
	parser := sitter.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(sitter.NewLanguage(tsjs.Language())); err != nil {
		return nil, fmt.Errorf("set the JavaScript grammar: %w", err)
	}
	tree := parser.Parse(src, nil)
	if tree == nil {
		return nil, errors.New("parse: no tree")
	}
	defer tree.Close()
	c := tree.Walk()
	defer c.Close()
	// inTry[d] says whether the node at depth d is inside a try body.
	inTry := []bool{false}
	kinds := []string{""}
	var out []required
	for {
		n := c.Node()
		d := len(inTry) - 1
		try := inTry[d]
		if !try && d > 0 && kinds[d-1] == "try_statement" && c.FieldName() == "body" {
			try = true
			inTry[d] = true
		}
		if !try {
			if name, ok := requiredName(n, src); ok {
				out = append(out, required{name: name, line: int(n.StartPosition().Row) + 1})
			}
		}
		kinds[d] = n.Kind()
		if c.GotoFirstChild() {
			inTry, kinds = append(inTry, try), append(kinds, "")
			continue
		}
		for !c.GotoNextSibling() {
			if !c.GotoParent() {
				return out, nil
			}
			inTry, kinds = inTry[:len(inTry)-1], kinds[:len(kinds)-1]
		}
		inTry[len(inTry)-1] = inTry[len(inTry)-2]
	}
}

// requiredName is the module name of require("x") or import ... from "x".
func requiredName(n *sitter.Node, src []byte) (string, bool) {
	var str *sitter.Node
	switch n.Kind() {
	case "call_expression":
		fn, args := n.ChildByFieldName("function"), n.ChildByFieldName("arguments")
		if fn == nil || args == nil || fn.Kind() != "identifier" || fn.Utf8Text(src) != "require" || args.NamedChildCount() != 1 {
			return "", false
		}
		str = args.NamedChild(0)
	case "import_statement":
		str = n.ChildByFieldName("source")
	default:
		return "", false
	}
	if str == nil || str.Kind() != "string" {
		return "", false
	}
	s := str.Utf8Text(src)
	if len(s) < 2 {
		return "", false
	}
	return s[1 : len(s)-1], true
}
