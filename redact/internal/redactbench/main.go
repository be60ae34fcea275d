// Command redactbench measures package redact (make bench-redact): recall
// on the labelled corpus of fake secrets, and false positives per 10,000
// lines of ordinary text (this repository's files as git lists them, and
// the Go module cache), leaving out the known test-secret fixtures that
// redact/testdata/fp-exclude.txt lists with the reason for each.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"dialogfarm/redact"
	"dialogfarm/redact/internal/measure"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "redactbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, w io.Writer) error {
	fl := flag.NewFlagSet("redactbench", flag.ContinueOnError)
	corpus := fl.String("corpus", "redact/testdata/recall", "labelled corpus")
	labels := fl.String("labels", "redact/testdata/recall-labels.jsonl", "its labels")
	repo := fl.String("repo", ".", "this repository (its git-listed files are scanned)")
	modcache := fl.String("modcache", "", "Go module cache (default: go env GOMODCACHE; \"none\" skips it)")
	exclude := fl.String("exclude", "redact/testdata/fp-exclude.txt", "known test-secret fixtures left out of the false-positive count")
	list := fl.String("list", "out/bench/redact-fp.txt", "where to write every false positive (masked)")
	show := fl.Int("show", 20, "false positives to print")
	only := fl.String("only", "", "scan only the files of an earlier -list (to check a change quickly)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	d, err := redact.NewDetector()
	if err != nil {
		return err
	}
	start := time.Now()
	rec, err := measure.Recall(ctx, redact.NewRedactor(d), *corpus, *labels)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "recall: %.2f%% (%d of %d secrets, %d kinds, %d files) in %s\n", 100*rec.Recall(),
		rec.Secrets-len(rec.Missed), rec.Secrets, rec.Kinds, rec.Files, time.Since(start).Round(time.Millisecond))
	for _, layout := range slices.Sorted(mapsKeys(rec.PerLayout)) {
		n := rec.PerLayout[layout]
		fmt.Fprintf(w, "  %-20s %3d secrets, %d missed\n", layout, n[0], n[1])
	}
	for _, m := range rec.Missed {
		fmt.Fprintf(w, "  MISSED %s (%s) %s:%d, %d characters left\n", m.Kind, m.Layout, m.Path, m.Line, len(m.Left))
	}

	ex, err := measure.ReadExclusions(*exclude)
	if err != nil {
		return err
	}
	files, err := gitFiles(*repo)
	if err != nil {
		return err
	}
	roots := []measure.Root{{Name: "repo", Dir: *repo, Files: files}}
	if *modcache == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			return fmt.Errorf("go env GOMODCACHE: %w", err)
		}
		*modcache = strings.TrimSpace(string(out))
	}
	if *modcache != "none" {
		roots = append(roots, measure.Root{Name: "modcache", Dir: *modcache})
	}
	if *only != "" {
		if roots, err = onlyListed(*only, roots); err != nil {
			return err
		}
	}
	for _, root := range roots {
		start := time.Now()
		fp, err := measure.FalsePositives(ctx, d, []measure.Root{root}, ex, runtime.NumCPU())
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "false positives, %s (%s): %d in %d lines of %d text files = %.2f per 10,000 lines (%d files excluded as fixtures, %d binary, %d over 4 MiB; %s)\n",
			root.Name, root.Dir, len(fp.Findings), fp.Lines, fp.Files, fp.Per10k(), fp.Excluded, fp.Binary, fp.TooBig, time.Since(start).Round(time.Second))
		byRule := map[string]int{}
		for _, f := range fp.Findings {
			byRule[f.Rule]++
		}
		rules := slices.SortedFunc(mapsKeys(byRule), func(a, b string) int { return cmp.Or(byRule[b]-byRule[a], strings.Compare(a, b)) })
		for _, r := range rules {
			fmt.Fprintf(w, "  %-28s %d\n", r, byRule[r])
		}
		slices.SortFunc(fp.Findings, func(a, b measure.FP) int { return cmp.Or(strings.Compare(a.Path, b.Path), a.Line-b.Line) })
		for i, f := range fp.Findings {
			if i == *show {
				fmt.Fprintf(w, "  … (all %d in %s)\n", len(fp.Findings), *list)
				break
			}
			fmt.Fprintf(w, "  FP %s:%d %s %s\n", f.Path, f.Line, f.Rule, f.Masked)
		}
		if err := writeList(*list, root.Name, fp.Findings); err != nil {
			return err
		}
	}
	return nil
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// onlyListed restricts roots to the files of a list written by writeList.
func onlyListed(path string, roots []measure.Root) ([]measure.Root, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	files := map[string]map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		loc, _, _ := strings.Cut(line, " ")
		root, rest, ok := strings.Cut(loc, ":")
		if i := strings.LastIndexByte(rest, ':'); ok && i > 0 {
			if files[root] == nil {
				files[root] = map[string]bool{}
			}
			files[root][rest[:i]] = true
		}
	}
	var out []measure.Root
	for _, r := range roots {
		r.Files = slices.Sorted(mapsKeys(files[r.Name]))
		out = append(out, r)
	}
	return out, nil
}

// gitFiles lists the repository's files as git does.
func gitFiles(dir string) ([]string, error) {
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", dir, err)
	}
	return strings.Split(strings.TrimRight(string(out), "\x00"), "\x00"), nil
}

// writeList appends the findings of root to path (made afresh for the
// first root).
func writeList(path, root string, fps []measure.FP) error {
	if err := os.MkdirAll(dirOf(path), 0o755); err != nil {
		return err
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if root == "repo" {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	for _, fp := range fps {
		fmt.Fprintf(f, "%s:%s:%d %s %s\n", fp.Root, fp.Path, fp.Line, fp.Rule, fp.Masked)
	}
	return f.Close()
}

func dirOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}
