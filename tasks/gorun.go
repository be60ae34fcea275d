package tasks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// goPkgTrace traces the tests of one Go package with one instrumented test
// binary.
type goPkgTrace struct {
	repo   string
	pkg    goPkg
	opt    TraceOptions
	fileOf func(string) string
	bin    string
	tmp    string // TMPDIR shared by the package's runs

	base    coverage
	tests   []goTestCov
	dropped []Dropped
}

type goTestCov struct {
	name string
	cov  coverage // blocks this test ran (baseline subtracted)
	all  coverage // every block of the profile, for call-site lookup
}

func (pt *goPkgTrace) env() []string { return []string{"TMPDIR=" + pt.tmp} }

func (pt *goPkgTrace) run(ctx context.Context, coverpkg string) error {
	log := pt.opt.Log.With(zap.String("pkg", pt.pkg.ImportPath))
	if err := os.MkdirAll(pt.tmp, 0o755); err != nil {
		return err
	}
	res, err := runCmd(ctx, pt.repo, nil, 10*pt.opt.TestTimeout, "go", "test", "-c", "-cover", "-covermode=atomic",
		"-coverpkg="+coverpkg, "-o", pt.bin, pt.pkg.ImportPath)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("build test binary for %s: %s", pt.pkg.ImportPath, tail(res.Output, 3000))
	}
	res, err = pt.exec(ctx, "-test.list", ".")
	if err != nil {
		return err
	}
	var names []string
	for _, l := range strings.Split(res.Output, "\n") {
		if goTestFuncRe.MatchString(l + "_") {
			names = append(names, strings.TrimSpace(l))
		}
	}
	prof := filepath.Join(pt.tmp, "base.cov")
	if res, err = pt.exec(ctx, "-test.run", "^$", "-test.coverprofile", prof); err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("baseline run of %s (no tests) failed: %s", pt.pkg.ImportPath, tail(res.Output, 2000))
	}
	if pt.base, err = readCoverage(prof, pt.fileOf); err != nil {
		return err
	}
	// The whole package in one process: a test that passes alone but not
	// here (or the reverse) depends on the order.
	full, err := pt.exec(ctx, "-test.v", "-test.count=1")
	if err != nil {
		return err
	}
	inFull := map[string]string{}
	for _, m := range goTestLine.FindAllStringSubmatch(full.Output, -1) {
		inFull[m[2]] = m[1]
	}
	log.Info("tracing", zap.Int("tests", len(names)))
	// tests run Jobs at a time; their results are added in list order
	type result struct {
		tc      *goTestCov
		dropped *Dropped
	}
	results := make([]result, len(names))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, pt.opt.Jobs))
	for i, name := range names {
		g.Go(func() error {
			tc, d, err := pt.traceTest(gctx, name, inFull[name])
			results[i] = result{tc, d}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, r := range results {
		if r.dropped != nil {
			pt.dropped = append(pt.dropped, *r.dropped)
		} else if r.tc != nil {
			pt.tests = append(pt.tests, *r.tc)
		}
	}
	return nil
}

func (pt *goPkgTrace) exec(ctx context.Context, args ...string) (runResult, error) {
	return runCmd(ctx, pt.pkg.Dir, pt.env(), pt.opt.TestTimeout, pt.bin, append([]string{"-test.timeout", pt.opt.TestTimeout.String()}, args...)...)
}

// traceTest runs one test Runs times alone and returns its coverage, or
// why it is dropped.
func (pt *goPkgTrace) traceTest(ctx context.Context, name, fullOutcome string) (*goTestCov, *Dropped, error) {
	id := pt.pkg.ImportPath + "." + name
	var outcomes []string
	var tc goTestCov
	var lastOut string
	for r := 0; r < pt.opt.Runs; r++ {
		prof := filepath.Join(pt.tmp, fmt.Sprintf("%s.%d.cov", name, r))
		res, err := pt.exec(ctx, "-test.run", "^"+name+"$", "-test.count=1", "-test.coverprofile", prof)
		if err != nil {
			return nil, nil, err
		}
		lastOut = res.Output
		if res.ExitCode != 0 {
			outcomes = append(outcomes, "fail")
			continue
		}
		outcomes = append(outcomes, "pass")
		all, err := readCoverage(prof, pt.fileOf)
		if err != nil {
			return nil, nil, err
		}
		d := all.minus(pt.base)
		if tc.cov == nil {
			tc = goTestCov{name: name, cov: d, all: all}
			continue
		}
		for k, n := range d { // union over runs
			tc.cov[k] += n
		}
	}
	pass := !slices.Contains(outcomes, "fail")
	switch {
	case !pass && slices.Contains(outcomes, "pass"):
		return nil, &Dropped{Test: id, Reason: "flaky", Detail: strings.Join(outcomes, ",")}, nil
	case !pass:
		return nil, &Dropped{Test: id, Reason: "fails", Detail: tail(lastOut, 600)}, nil
	case fullOutcome == "FAIL":
		return nil, &Dropped{Test: id, Reason: "order_dependent", Detail: "passes alone, fails with the rest of its package"}, nil
	}
	return &tc, nil, nil
}
