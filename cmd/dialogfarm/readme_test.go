package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// The README's flag tables are generated from the commands' flags: each
// sits between "<!-- flags: PATH -->" and "<!-- end flags -->". This test
// fails when a table differs from the code (a flag missing, a default or
// a meaning changed); `go test ./cmd/dialogfarm -run TestREADMEFlags
// -update` rewrites the tables, and adds a missing one at the end of the
// command's README section.

const readmePath = "../../README.md"

var update = flag.Bool("update", false, "rewrite the README's generated flag tables")

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

func TestREADMEFlags(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	paths, want := flagBlocks()
	have := map[string]string{}
	for _, m := range blockRE.FindAllStringSubmatch(readme, -1) {
		have[m[1]] = m[2]
	}
	var missing []string
	for _, path := range paths {
		got, ok := have[path]
		switch {
		case !ok:
			missing = append(missing, path)
		case got != want[path]:
			t.Errorf("README flag table of %q differs from the code (run go test ./cmd/dialogfarm -run TestREADMEFlags -update):\n got:\n%s\nwant:\n%s", path, got, want[path])
		}
	}
	for path := range have {
		if _, ok := want[path]; !ok {
			t.Errorf("README has a flag table for %q, which is no command", path)
		}
	}
	if !*update {
		if len(missing) > 0 {
			t.Errorf("README has no flag table for %v (run go test ./cmd/dialogfarm -run TestREADMEFlags -update)", missing)
		}
		return
	}
	readme = blockRE.ReplaceAllStringFunc(readme, func(block string) string {
		path := blockRE.FindStringSubmatch(block)[1]
		if w, ok := want[path]; ok {
			return "<!-- flags: " + path + " -->\n" + w + "<!-- end flags -->\n"
		}
		return ""
	})
	for _, path := range missing {
		var ok bool
		if readme, ok = insertBlock(readme, path, want[path]); !ok {
			t.Errorf("README has no section for %q to put its flag table in", path)
		}
	}
	if err := os.WriteFile(readmePath, []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sectionOf names the README section of commands whose heading does not
// name them.
var sectionOf = map[string]string{"pipeline": "Pipelines as DAGs", "mcp": "(MCP)"}

// insertBlock puts path's table into the README section of its command
// (the heading naming `dialogfarm PATH`, else its parent command's): in
// place of the section's first hand-written flag table, else at the end of
// the section under a caption.
func insertBlock(readme, path, table string) (string, bool) {
	block := "<!-- flags: " + path + " -->\n" + table + "<!-- end flags -->\n"
	lines := strings.SplitAfter(readme, "\n")
	heading := func(cmd string) int {
		for i, l := range lines { // the command's own heading first
			if strings.TrimSpace(l) == "### `dialogfarm "+cmd+"`" {
				return i
			}
		}
		for i, l := range lines {
			if strings.HasPrefix(l, "#") && (strings.Contains(l, "`dialogfarm "+cmd+"`") ||
				(sectionOf[cmd] != "" && strings.Contains(l, sectionOf[cmd]))) {
				return i
			}
		}
		return -1
	}
	start, caption := heading(path), false
	if path == "commands" {
		for i, l := range lines {
			if strings.HasPrefix(l, "| command | does |") {
				j := i
				for j < len(lines) && strings.HasPrefix(lines[j], "|") {
					j++
				}
				return strings.Join(lines[:i], "") + block + strings.Join(lines[j:], ""), true
			}
		}
		return readme, false
	}
	if path == "global" {
		start = heading("drive") - 1 // the Commands section, before the first command
		for start > 0 && !strings.HasPrefix(lines[start], "## ") {
			start--
		}
		caption = true
	}
	if start < 0 {
		parent, _, _ := strings.Cut(path, " ")
		start, caption = heading(parent), true
	}
	if start < 0 {
		return readme, false
	}
	end := start + 1
	inFence := false
	for ; end < len(lines); end++ {
		if strings.HasPrefix(lines[end], "```") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(lines[end], "#") && path != "global" {
			break
		}
		if path == "global" && strings.HasPrefix(lines[end], "### ") {
			break
		}
	}
	if !caption {
		for i := start + 1; i < end; i++ {
			if strings.HasPrefix(lines[i], "| flag | default | meaning |") {
				j := i
				for j < end && strings.HasPrefix(lines[j], "|") {
					j++
				}
				out := strings.Join(lines[:i], "") + block + strings.Join(lines[j:], "")
				return out, true
			}
		}
	}
	title := "`dialogfarm " + path + "` flags:"
	if path == "global" {
		title = "Global flags (every command):"
	}
	ins := title + "\n\n" + block + "\n"
	out := strings.Join(lines[:end], "")
	if !strings.HasSuffix(out, "\n\n") {
		out += "\n"
	}
	return out + ins + strings.Join(lines[end:], ""), true
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
