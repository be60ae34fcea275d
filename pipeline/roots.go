package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CodeOutsideRoots is the finding of a host path outside the data roots.
const CodeOutsideRoots = "PATH_OUTSIDE_ROOTS"

// hostPathKinds are the resource kinds whose params name files or
// folders of the host.
var hostPathKinds = map[string]bool{ResourceDir: true, ResourceFile: true, ResourceProfile: true}

// hostPaths returns the host paths a param's value names: every string
// of a dir or file param, and a profile param's value unless it is a
// built-in profile's name (a bare name with no file of that name).
func hostPaths(kind string, val any, base string) []string {
	if !hostPathKinds[kind] {
		return nil
	}
	var out []string
	strs := paramStrings(val)
	if list, ok := val.([]string); ok {
		strs = list
	}
	for _, s := range strs {
		if s == "" {
			continue
		}
		if kind == ResourceProfile && filepath.Base(s) == s && filepath.Ext(s) == "" {
			if _, err := os.Stat(joinBase(base, s)); err != nil {
				continue // a built-in profile's name, not a path
			}
		}
		out = append(out, s)
	}
	return out
}

func joinBase(base, p string) string {
	if filepath.IsAbs(p) || base == "" {
		return p
	}
	return filepath.Join(base, p)
}

// realPath is p made absolute with every symbolic link resolved; a path
// that does not exist (yet) is resolved as far as its deepest existing
// folder.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) || filepath.Dir(dir) == dir {
			return "", err
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// within says whether path is root or under it (both resolved).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// outsideRoots returns, when env confines paths (env.Roots is set), why
// path is not under one of them ("" when it is).
func outsideRoots(env Env, path string) string {
	if len(env.Roots) == 0 {
		return ""
	}
	real, err := realPath(joinBase(env.BaseDir, path))
	if err != nil {
		return fmt.Sprintf("path %s cannot be resolved: %v", path, err)
	}
	for _, r := range env.Roots {
		root, err := realPath(r)
		if err == nil && within(root, real) {
			return ""
		}
	}
	msg := fmt.Sprintf("path %s is outside the data roots (%s)", path, strings.Join(env.Roots, ", "))
	if real != path {
		msg = fmt.Sprintf("path %s (%s) is outside the data roots (%s)", path, real, strings.Join(env.Roots, ", "))
	}
	return msg
}

// rootFindings are the findings of node n's params that name host paths
// outside env's data roots.
func rootFindings(n *Node, op *Operator, params map[string]any, env Env) []Finding {
	var out []Finding
	for _, param := range sortedKeys(op.Resources) {
		for _, p := range hostPaths(op.Resources[param], params[param], env.BaseDir) {
			if msg := outsideRoots(env, p); msg != "" {
				out = append(out, Finding{Code: CodeOutsideRoots, Severity: SevError, Node: n.ID, Param: param, Line: n.Line, Message: msg,
					Suggestion: "use a path under " + strings.Join(env.Roots, " or ") + ", or start the server with --data-root naming a folder that holds it"})
			}
		}
	}
	return out
}

// checkRoots is the run-time check of a node's host paths, made just
// before it runs (a symbolic link changed since the run was validated is
// caught here).
func checkRoots(n *Node, op *Operator, params map[string]any, env Env) error {
	fs := rootFindings(n, op, params, env)
	if len(fs) == 0 {
		return nil
	}
	var msgs []string
	for _, f := range fs {
		msgs = append(msgs, f.String())
	}
	return fmt.Errorf("%w: %s", ErrOutsideRoots, strings.Join(msgs, "; "))
}

// ErrOutsideRoots means a node's param names a host path outside the data
// roots.
var ErrOutsideRoots = errors.New("a path is outside the data roots")
