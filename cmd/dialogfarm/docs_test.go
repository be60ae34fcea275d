package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// The flag tables of docs/commands.md are generated from the commands'
// flags: each sits between "<!-- flags: PATH -->" and "<!-- end flags -->".
// TestDocsFlags fails when a table differs from the code (a flag missing, a
// default or a meaning changed) or when a table sits in another Markdown
// file of the tree; `go test ./cmd/dialogfarm -run TestDocsFlags -update`
// rewrites the tables, and adds a missing one at the end of the command's
// section of docs/commands.md.

const (
	repoRoot     = "../.."
	commandsPath = repoRoot + "/docs/commands.md"
)

var update = flag.Bool("update", false, "rewrite the generated flag tables of docs/commands.md")

// flagTable renders fs as a Markdown table, in definition order.
func flagTable(fs *pflag.FlagSet) string {
	var b strings.Builder
	b.WriteString("| flag | default | meaning |\n| --- | --- | --- |\n")
	fs.SortFlags = false
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		def := f.DefValue
		switch {
		case def == "" && f.Value.Type() == "string":
			def = `""`
		case def == "":
			def = "—"
		}
		if def != "—" {
			def = "`" + def + "`"
		}
		usage := strings.ReplaceAll(strings.ReplaceAll(f.Usage, "|", `\|`), "\n", " ")
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, def, usage)
	})
	return b.String()
}

// flagBlocks are the generated tables by command path ("export", "tasks
// trace", "global"), in tree order.
func flagBlocks() ([]string, map[string]string) {
	a := &app{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, v: viper.New()}
	root := newRoot(a)
	paths := []string{"commands", "global"}
	blocks := map[string]string{"commands": commandTable(root), "global": flagTable(root.PersistentFlags())}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if sub.Runnable() {
				path := strings.TrimPrefix(sub.CommandPath(), "dialogfarm ")
				paths = append(paths, path)
				blocks[path] = flagTable(sub.Flags())
			}
			walk(sub)
		}
	}
	walk(root)
	return paths, blocks
}

// commandTable lists the commands with their one-line descriptions.
func commandTable(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("| command | does |\n| --- | --- |\n")
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.Name(), strings.ReplaceAll(c.Short, "|", `\|`))
	}
	return b.String()
}

var blockRE = regexp.MustCompile(`(?s)<!-- flags: ([a-z -]+) -->\n(.*?)<!-- end flags -->\n`)

func TestDocsFlags(t *testing.T) {
	data, err := os.ReadFile(commandsPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	paths, want := flagBlocks()
	have := map[string]string{}
	for _, m := range blockRE.FindAllStringSubmatch(doc, -1) {
		if _, dup := have[m[1]]; dup {
			t.Errorf("%s has two flag tables for %q", commandsPath, m[1])
		}
		have[m[1]] = m[2]
	}
	var missing []string
	for _, path := range paths {
		got, ok := have[path]
		switch {
		case !ok:
			missing = append(missing, path)
		case got != want[path]:
			t.Errorf("%s: flag table of %q differs from the code (run go test ./cmd/dialogfarm -run TestDocsFlags -update):\n got:\n%s\nwant:\n%s", commandsPath, path, got, want[path])
		}
	}
	for path := range have {
		if _, ok := want[path]; !ok {
			t.Errorf("%s has a flag table for %q, which is no command", commandsPath, path)
		}
	}
	for _, f := range markdownFiles(t) {
		if f == "docs/commands.md" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		if m := blockRE.FindStringSubmatch(string(data)); m != nil {
			t.Errorf("%s has a generated flag table (%q): they live in docs/commands.md only, where TestDocsFlags keeps them in step; link there instead", f, m[1])
		}
	}
	if !*update {
		if len(missing) > 0 {
			t.Errorf("%s has no flag table for %v (run go test ./cmd/dialogfarm -run TestDocsFlags -update)", commandsPath, missing)
		}
		return
	}
	doc = blockRE.ReplaceAllStringFunc(doc, func(block string) string {
		path := blockRE.FindStringSubmatch(block)[1]
		if w, ok := want[path]; ok {
			return "<!-- flags: " + path + " -->\n" + w + "<!-- end flags -->\n"
		}
		return ""
	})
	for _, path := range missing {
		doc = insertBlock(doc, path, want[path])
	}
	if err := os.WriteFile(commandsPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// insertBlock puts path's table into docs/commands.md: at the end of the
// section of its command (the heading "## `dialogfarm PATH`", else its
// parent command's; "## Global flags" for the global flags), under a
// caption; a command with no section gets one at the end of the file.
func insertBlock(doc, path, table string) string {
	block := "<!-- flags: " + path + " -->\n" + table + "<!-- end flags -->\n"
	if path == "commands" { // the command list goes after the synopsis
		before, after, ok := strings.Cut(doc, "\n## ")
		if !ok {
			return doc + "\n" + block
		}
		return before + "\n" + block + "\n## " + after
	}
	lines := strings.SplitAfter(doc, "\n")
	heading := func(title string) int {
		for i, l := range lines {
			if strings.TrimSpace(l) == title {
				return i
			}
		}
		return -1
	}
	title := "`dialogfarm " + path + "` flags:"
	start := heading("## `dialogfarm " + path + "`")
	switch {
	case path == "global":
		start, title = heading("## Global flags"), "Global flags (every command):"
	case start < 0:
		parent, _, _ := strings.Cut(path, " ")
		start = heading("## `dialogfarm " + parent + "`")
	}
	if start < 0 {
		return strings.TrimRight(doc, "\n") + "\n\n## `dialogfarm " + path + "`\n\n" + block
	}
	end, inFence := start+1, false
	for ; end < len(lines); end++ {
		if strings.HasPrefix(lines[end], "```") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(lines[end], "## ") {
			break
		}
	}
	out := strings.Join(lines[:end], "")
	if !strings.HasSuffix(out, "\n\n") {
		out += "\n"
	}
	return out + title + "\n\n" + block + "\n" + strings.Join(lines[end:], "")
}

// TestFlagTableRendering checks the table format on a small flag set.
func TestFlagTableRendering(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.String("out", "", "run folder (required)")
	fs.Int("n", 3, "how many | at most")
	fs.BoolP("verbose", "v", false, "debug")
	fs.StringSlice("repos", nil, "repositories")
	want := "| flag | default | meaning |\n| --- | --- | --- |\n" +
		"| `--out` | `\"\"` | run folder (required) |\n" +
		"| `--n` | `3` | how many \\| at most |\n" +
		"| `-v`, `--verbose` | `false` | debug |\n" +
		"| `--repos` | `[]` | repositories |\n"
	if got := flagTable(fs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
