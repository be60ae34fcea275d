package analyst

import (
	"fmt"
	"math"
	"testing"

	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// BenchmarkMakePlan measures planning N = 1,000 and 10,000 dialogues over
// the default profile, and reports the largest per-dimension JSD between
// the profile's targets and the plan's quotas.
func BenchmarkMakePlan(b *testing.B) {
	p := loadProfile(b, "default")
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var pl *profiles.Plan
			for b.Loop() {
				var err error
				if pl, err = MakePlan(p, PlanConfig{N: n, Seed: 42}); err != nil {
					b.Fatal(err)
				}
			}
			worst := 0.0
			for _, dim := range vocab.Dimensions() {
				worst = math.Max(worst, JSD(p.Target(dim), Floats(pl.Quotas[dim])))
			}
			b.ReportMetric(worst, "max-jsd-target")
			b.ReportMetric(float64(len(pl.Cells)), "cells")
		})
	}
}
