package dataset

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Split names.
const (
	SplitTrain      = "train"
	SplitValidation = "validation"
)

// assignSplits maps each id to a split: train gets round(n·share) of them,
// validation the rest (at least one when share < 1 and there are two or
// more ids). The same ids and seed always give the same assignment,
// whatever order the ids come in.
func assignSplits(ids []string, share float64, seed int64) map[string]string {
	sorted := slices.Sorted(slices.Values(ids))
	rng := rand.New(rand.NewPCG(uint64(seed), 0x646174617365742e)) // "dataset."
	rng.Shuffle(len(sorted), func(i, j int) { sorted[i], sorted[j] = sorted[j], sorted[i] })
	nVal := len(sorted) - int(math.Round(float64(len(sorted))*share))
	if share < 1 && nVal == 0 && len(sorted) >= 2 {
		nVal = 1
	}
	nVal = min(nVal, len(sorted))
	out := make(map[string]string, len(sorted))
	for i, id := range sorted {
		out[id] = SplitTrain
		if i < nVal {
			out[id] = SplitValidation
		}
	}
	return out
}
