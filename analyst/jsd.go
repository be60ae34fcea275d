package analyst

import (
	"math"
	"slices"
)

// JSD is the Jensen–Shannon divergence between two distributions over the
// same values, in bits (log base 2), so it lies in [0, 1]: 0 for identical
// distributions, 1 for distributions with disjoint support. Inputs are
// normalised first, so counts may be passed directly; values missing from
// one map have probability zero there. If either side is empty (sums to
// zero) the result is NaN.
//
//	JSD(P, Q) = ½ KL(P ‖ M) + ½ KL(Q ‖ M),  M = ½ (P + Q)
func JSD(p, q map[string]float64) float64 {
	keys := make([]string, 0, len(p)+len(q))
	for k := range p {
		keys = append(keys, k)
	}
	for k := range q {
		if _, ok := p[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys) // fixed summation order: the same inputs give the same bits
	sp, sq := 0.0, 0.0
	for _, k := range keys {
		sp += p[k]
		sq += q[k]
	}
	if sp <= 0 || sq <= 0 {
		return math.NaN()
	}
	d := 0.0
	for _, k := range keys {
		pk, qk := p[k]/sp, q[k]/sq
		m := (pk + qk) / 2
		if pk > 0 {
			d += pk * math.Log2(pk/m) / 2
		}
		if qk > 0 {
			d += qk * math.Log2(qk/m) / 2
		}
	}
	return math.Max(0, math.Min(1, d))
}

// Floats turns integer counts into the float map JSD takes.
func Floats[K comparable](c map[K]int) map[K]float64 {
	out := make(map[K]float64, len(c))
	for k, v := range c {
		out[k] = float64(v)
	}
	return out
}
