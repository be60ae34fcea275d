package configgen

import (
	"context"
	"fmt"
	"math"
	"testing"

	"go.uber.org/zap"

	"dialogfarm/analyst"
	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// BenchmarkGenerate measures configs generated per second for N = 10,000
// on the bundled sample repository with the default profile, templates
// only (no model calls). Indexing (walk + tree-sitter) is included.
func BenchmarkGenerate(b *testing.B) {
	pl := defaultPlan(b, 10000, 42)
	cfg := sampleConfig()
	cfg.Seed = 42
	b.ResetTimer()
	for b.Loop() {
		res, err := Generate(context.Background(), pl, cfg, zap.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Configs) != 10000 {
			b.Fatalf("%d configs", len(res.Configs))
		}
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "configs/s")
}

// dimJSD is, per dimension, the JSD between the plan's quotas and the
// generated configs, and between the profile's targets and the configs.
func dimJSD(tb testing.TB, n int) (planVsConfigs, targetVsConfigs map[string]float64) {
	p, err := profiles.Builtin("default")
	if err != nil {
		tb.Fatal(err)
	}
	pl, err := analyst.MakePlan(p, analyst.PlanConfig{N: n, Seed: 42})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := sampleConfig()
	cfg.Seed = 42
	res, err := Generate(context.Background(), pl, cfg, zap.NewNop())
	if err != nil {
		tb.Fatal(err)
	}
	produced := map[string]map[string]int{}
	for _, c := range res.Configs {
		for dim, v := range profiles.ConfigValues(c) {
			if produced[dim] == nil {
				produced[dim] = map[string]int{}
			}
			produced[dim][v]++
		}
	}
	planVsConfigs, targetVsConfigs = map[string]float64{}, map[string]float64{}
	for _, dim := range vocab.Dimensions() {
		planVsConfigs[dim] = analyst.JSD(analyst.Floats(pl.Quotas[dim]), analyst.Floats(produced[dim]))
		targetVsConfigs[dim] = analyst.JSD(p.Target(dim), analyst.Floats(produced[dim]))
	}
	return planVsConfigs, targetVsConfigs
}

// BenchmarkJSD reports, at N = 1,000 and 10,000, the largest per-dimension
// JSD between plan and configs (and between profile targets and configs),
// and each dimension's plan-vs-configs JSD.
func BenchmarkJSD(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var pc, tc map[string]float64
			for b.Loop() {
				pc, tc = dimJSD(b, n)
			}
			maxPC, maxTC := 0.0, 0.0
			for _, dim := range vocab.Dimensions() {
				maxPC, maxTC = math.Max(maxPC, pc[dim]), math.Max(maxTC, tc[dim])
				b.ReportMetric(pc[dim], "jsd-"+dim)
			}
			b.ReportMetric(maxPC, "max-jsd-plan")
			b.ReportMetric(maxTC, "max-jsd-target")
		})
	}
}

// TestJSDTarget holds the benchmark's target: at N = 1,000 every
// dimension's JSD between plan and configs is at most 0.02.
func TestJSDTarget(t *testing.T) {
	pc, tc := dimJSD(t, 1000)
	for _, dim := range vocab.Dimensions() {
		t.Logf("%-12s plan→configs %.6f  target→configs %.6f", dim, pc[dim], tc[dim])
		if pc[dim] > 0.02 || tc[dim] > 0.02 {
			t.Errorf("%s: JSD plan %.4f, target %.4f > 0.02", dim, pc[dim], tc[dim])
		}
	}
}
