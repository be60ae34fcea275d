package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"dialogfarm/dialog"
)

// copyRepo copies the repository to dst, so that nothing the editor does
// (or a config gets wrong) can change the checkout; hidden folders (.git)
// and node_modules are left out.
func copyRepo(src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && path != src && (strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !e.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
}

// function is a top-level function found in a source file.
type function struct {
	file, lang, name string
	header, end      int // 1-based lines of the header and the last line
	body             dialog.Position
	lines            []string
}

// languages maps a file extension to the editor's language id and a
// pattern for a function header that names the function in group 1.
var languages = map[string]struct {
	id     string
	header *regexp.Regexp
}{
	".py": {"python", regexp.MustCompile(`^def (\w+)\(`)},
	".go": {"go", regexp.MustCompile(`^func (\w+)\(`)},
	".js": {"javascript", regexp.MustCompile(`^(?:export )?function (\w+)\(`)},
	".ts": {"typescript", regexp.MustCompile(`^(?:export )?function (\w+)\(`)},
}

// findFunctions lists the top-level functions of the repository's Python,
// Go, JavaScript and TypeScript files, in path order.
func findFunctions(repo string) ([]function, error) {
	var out []function
	err := filepath.WalkDir(repo, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		lang, ok := languages[filepath.Ext(path)]
		if !ok {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repo, path)
		if err != nil {
			return err
		}
		lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
		for i, l := range lines {
			m := lang.header.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			f := function{file: filepath.ToSlash(rel), lang: lang.id, name: m[1], header: i + 1, lines: lines}
			if f.end = blockEnd(lines, i); f.end > f.header {
				f.body = firstBodyPosition(lines, i)
				out = append(out, f)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find functions in %s: %w", repo, err)
	}
	return out, nil
}

// blockEnd returns the 1-based last line of the block whose header is at
// index h: the closing brace at the header's indentation, or the last
// non-blank line before the next line indented no deeper than the header.
func blockEnd(lines []string, h int) int {
	last := h
	for j := h + 1; j < len(lines); j++ {
		l := lines[j]
		if strings.TrimSpace(l) == "" {
			continue
		}
		if indent(l) <= indent(lines[h]) {
			if strings.HasPrefix(strings.TrimSpace(l), "}") {
				return j + 1
			}
			break
		}
		last = j
	}
	return last + 1
}

func indent(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

// firstBodyPosition is the first non-blank character after the header.
func firstBodyPosition(lines []string, h int) dialog.Position {
	for j := h + 1; j < len(lines); j++ {
		if t := strings.TrimLeft(lines[j], " \t"); t != "" {
			return dialog.Position{Line: j + 1, Col: len([]rune(lines[j])) - len([]rune(t)) + 1}
		}
	}
	return dialog.Position{Line: h + 1, Col: 1}
}

// selection covers the whole function, header to closing line.
func (f function) selection() *dialog.Selection {
	end := dialog.Position{Line: f.end + 1, Col: 1}
	if f.end >= len(f.lines) { // the file ends without a newline
		end = dialog.Position{Line: f.end, Col: len([]rune(f.lines[f.end-1])) + 1}
	}
	return &dialog.Selection{Start: dialog.Position{Line: f.header, Col: 1}, End: end}
}

// shape is what a generated config varies: the trigger, cursor or
// selection, and a slash command or free text.
type shape struct {
	trigger   string
	selection bool
	slash     string // "" for free text
	turns     int
}

// warmShape opens the chat once after the window loaded; it pays for the
// window load and the first webview (service worker) and is timed apart.
var warmShape = shape{trigger: dialog.TriggerPanel, turns: 1}

// measuredShapes cover every trigger twice, once with a cursor and once with
// a selection, free text and slash commands, all as 2-turn dialogues. The
// first four (one per trigger) are the throughput mix.
var measuredShapes = []shape{
	{trigger: dialog.TriggerPanel, turns: 2},
	{trigger: dialog.TriggerPalette, selection: true, turns: 2},
	{trigger: dialog.TriggerKeybinding, slash: "/explain", turns: 2},
	{trigger: dialog.TriggerContextMenu, selection: true, turns: 2},
	{trigger: dialog.TriggerPanel, selection: true, slash: "/tests", turns: 2},
	{trigger: dialog.TriggerPalette, slash: "/doc", turns: 2},
	{trigger: dialog.TriggerKeybinding, selection: true, turns: 2},
	{trigger: dialog.TriggerContextMenu, slash: "/fix", turns: 2},
}

var followUps = []string{
	"What happens with an empty input?",
	"Can you show a shorter version?",
	"Which edge cases would break this?",
	"How would you test it?",
}

// configSet is the benchmark's workload over one repository copy.
type configSet struct {
	Warm     dialog.ChatConfig
	Measured []dialog.ChatConfig
}

// throughputMix is one config per trigger, the unit of work each simulator
// repeats in the throughput rounds.
func (s configSet) throughputMix() []dialog.ChatConfig { return s.Measured[:4] }

// makeConfigs writes the workload over the functions of repo: config k
// uses a function of the k-th file (round robin), so consecutive configs
// open different files.
func makeConfigs(repo string) (configSet, error) {
	fns, err := findFunctions(repo)
	if err != nil {
		return configSet{}, err
	}
	byFile := map[string][]function{}
	var files []string
	for _, f := range fns {
		if _, seen := byFile[f.file]; !seen {
			files = append(files, f.file)
		}
		byFile[f.file] = append(byFile[f.file], f)
	}
	slices.Sort(files)
	if len(files) < 2 {
		return configSet{}, fmt.Errorf("make configs: %s has functions in %d files, want at least 2", repo, len(files))
	}
	pick := func(k int) function {
		in := byFile[files[k%len(files)]]
		return in[(k/len(files))%len(in)]
	}
	var set configSet
	set.Warm = makeConfig(repo, "warmup", pick(0), warmShape, 0)
	for i, sh := range measuredShapes {
		set.Measured = append(set.Measured, makeConfig(repo, fmt.Sprintf("m%d-%s", i+1, sh.trigger), pick(i+1), sh, i))
	}
	for _, c := range append([]dialog.ChatConfig{set.Warm}, set.Measured...) {
		if err := c.Validate(); err != nil {
			return configSet{}, fmt.Errorf("make configs: %w", err)
		}
	}
	return set, nil
}

func makeConfig(repo, id string, f function, sh shape, k int) dialog.ChatConfig {
	c := dialog.ChatConfig{
		ID: id, Repo: repo, File: f.file, Language: f.lang, Trigger: sh.trigger,
		Instruction: dialog.InstructionFreeText, Locale: "en", Symbol: f.name,
	}
	if sh.selection {
		c.Selection = f.selection()
		c.CursorBehaviour = "whole_function"
	} else {
		c.Cursor = &f.body
		c.CursorBehaviour = "inside_function"
	}
	first := fmt.Sprintf("What does %s do?", f.name)
	if sh.slash != "" {
		c.Instruction = dialog.InstructionSlash
		first = sh.slash + " keep it short"
	}
	c.Turns = append(c.Turns, dialog.TurnSpec{Query: first})
	for t := 1; t < sh.turns; t++ {
		c.Turns = append(c.Turns, dialog.TurnSpec{Query: followUps[(k+t)%len(followUps)]})
	}
	return c
}

// cycle returns count configs taken from cfgs in turn, with unique ids.
func cycle(cfgs []dialog.ChatConfig, count int, tag string) []dialog.ChatConfig {
	out := make([]dialog.ChatConfig, 0, count)
	for i := range count {
		c := cfgs[i%len(cfgs)]
		c.ID = fmt.Sprintf("%s-%s-%d", c.ID, tag, i+1)
		out = append(out, c)
	}
	return out
}

// lineCount is the number of lines of the file (0 when it cannot be read).
func lineCount(path string) int {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return 0
	}
	return strings.Count(strings.TrimSuffix(string(data), "\n"), "\n") + 1
}

// repoMix is the throughput mix over n copies of repo (set is repo's own
// workload): the copies' mixes in turn, config by config, as configgen
// interleaves the repositories of a plan. The copies are made beside repo
// (repo-2, repo-3, ...).
func repoMix(set configSet, repo string, n int) ([]dialog.ChatConfig, error) {
	mixes := [][]dialog.ChatConfig{set.throughputMix()}
	for k := 2; k <= n; k++ {
		dst := fmt.Sprintf("%s-%d", repo, k)
		if err := copyRepo(repo, dst); err != nil {
			return nil, fmt.Errorf("copy %s: %w", repo, err)
		}
		s, err := makeConfigs(dst)
		if err != nil {
			return nil, err
		}
		mixes = append(mixes, s.throughputMix())
	}
	var out []dialog.ChatConfig
	for i := range mixes[0] {
		for _, m := range mixes {
			out = append(out, m[i])
		}
	}
	return out, nil
}
