package analyst

import (
	"math"
	"testing"
)

func TestJSDHandComputed(t *testing.T) {
	tests := map[string]struct {
		p, q map[string]float64
		want float64
	}{
		// identical distributions
		"identical": {map[string]float64{"a": 0.3, "b": 0.7}, map[string]float64{"a": 0.3, "b": 0.7}, 0},
		// disjoint support: M = (½, ½); KL(P‖M) = log2 2 = 1 on each side
		"disjoint": {map[string]float64{"a": 1}, map[string]float64{"b": 1}, 1},
		// P = (½, ½), Q = (1, 0): M = (¾, ¼);
		// KL(P‖M) = ½ log2(2/3) + ½ log2 2 = 0.2075187496
		// KL(Q‖M) = log2(4/3) = 0.4150374993; JSD = 0.3112781245
		"half vs point": {map[string]float64{"a": 0.5, "b": 0.5}, map[string]float64{"a": 1}, 0.3112781245},
		// P = (¼, ¾), Q = (¾, ¼): M = (½, ½);
		// KL(P‖M) = ¼ log2 ½ + ¾ log2 1.5 = 0.1887218755 = KL(Q‖M)
		"mirrored": {map[string]float64{"a": 0.25, "b": 0.75}, map[string]float64{"a": 0.75, "b": 0.25}, 0.1887218755},
		// counts are normalised first: same as "mirrored"
		"counts": {map[string]float64{"a": 2, "b": 6}, map[string]float64{"a": 3, "b": 1}, 0.1887218755},
		// P = (½, ½, 0), Q = (0, ½, ½): M = (¼, ½, ¼);
		// KL(P‖M) = ½ log2 2 + ½ log2 1 = ½ = KL(Q‖M); JSD = ½
		"half overlap": {map[string]float64{"a": 0.5, "b": 0.5}, map[string]float64{"b": 0.5, "c": 0.5}, 0.5},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := JSD(tt.p, tt.q)
			if math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("JSD = %.10f, want %.10f", got, tt.want)
			}
			if back := JSD(tt.q, tt.p); math.Abs(back-got) > 1e-12 {
				t.Errorf("not symmetric: %v vs %v", got, back)
			}
		})
	}
	if !math.IsNaN(JSD(map[string]float64{}, map[string]float64{"a": 1})) {
		t.Error("JSD with an empty side should be NaN")
	}
}
