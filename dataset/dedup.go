package dataset

import (
	"crypto/sha256"
	"strings"

	minhashlsh "github.com/ekzhu/minhash-lsh"
)

// DedupOptions configures duplicate removal.
type DedupOptions struct {
	// Exact drops records whose normalised user and assistant text equals
	// an earlier record's.
	Exact bool
	// Near drops records whose estimated Jaccard similarity (over
	// character Shingle-grams) with an earlier kept record is at least
	// Near; 0 turns near-duplicate removal off.
	Near float64
	// Perms is the number of MinHash permutations; Shingle the n-gram size
	// in characters.
	Perms, Shingle int
}

// DefaultDedup: exact removal on, near duplicates at Jaccard ≥ 0.85 over
// character 5-grams with 128 permutations.
func DefaultDedup() DedupOptions {
	return DedupOptions{Exact: true, Near: 0.85, Perms: 128, Shingle: 5}
}

// dedupText is what duplicates are judged on: the user and assistant
// messages (not the system prompt, which every record shares), lowercased
// with runs of white space collapsed.
func dedupText(s *sample) string {
	var parts []string
	for _, m := range s.Messages {
		if m.Role == "user" || m.Role == "assistant" {
			parts = append(parts, strings.Join(strings.Fields(strings.ToLower(m.Content)), " "))
		}
	}
	return strings.Join(parts, "\n")
}

// dedup marks duplicates in samples (sorted by id), keeping the first of
// each group, and returns the reason per dropped index.
func dedup(samples []*sample, opt DedupOptions) map[int]string {
	texts := make([]string, len(samples))
	for i, s := range samples {
		texts[i] = dedupText(s)
	}
	return Duplicates(texts, opt)
}

// Duplicates marks the texts that repeat an earlier one (exactly, or at
// Jaccard ≥ opt.Near by MinHash LSH), keeping the first of each group,
// and returns the reason per dropped index.
func Duplicates(texts []string, opt DedupOptions) map[int]string {
	drop := map[int]string{}
	if opt.Exact {
		seen := map[[32]byte]bool{}
		for i, t := range texts {
			h := sha256.Sum256([]byte(t))
			if seen[h] {
				drop[i] = DropExactDup
			}
			seen[h] = true
		}
	}
	if opt.Near <= 0 || opt.Near > 1 {
		return drop
	}
	perms, k := max(opt.Perms, 16), max(opt.Shingle, 1)
	// The LSH index picks its bands to balance false positives and false
	// negatives at its threshold, which finds only about half the pairs
	// right at it (at 0.85 with 128 permutations: 16 rows × 8 bands,
	// P(found | J = 0.85) ≈ 0.46). Indexing at a lower threshold finds
	// nearly all pairs at Near (at 0.65: 8 × 16, P ≈ 0.994); each
	// candidate is then checked against Near with the signatures.
	lsh := minhashlsh.NewMinhashLSH64(perms, max(0.5, opt.Near-0.2))
	sigs := make([][]uint64, len(texts))
	for i, t := range texts {
		if drop[i] != "" {
			continue
		}
		sigs[i] = signature(t, perms, k)
		lsh.Add(i, sigs[i])
	}
	lsh.Index()
	for i := range texts {
		if drop[i] != "" {
			continue
		}
		for _, c := range lsh.Query(sigs[i]) {
			j := c.(int)
			if j > i && drop[j] == "" && jaccard(sigs[i], sigs[j]) >= opt.Near {
				drop[j] = DropNearDuplicate
			}
		}
	}
	return drop
}

// signature is the MinHash signature of t's character k-grams (t itself
// when shorter). The seed is fixed so the result depends only on the text.
func signature(t string, perms, k int) []uint64 {
	mh := minhashlsh.NewMinhash(1, perms)
	r := []rune(t)
	if len(r) <= k {
		mh.Push([]byte(t))
		return mh.Signature()
	}
	for i := 0; i+k <= len(r); i++ {
		mh.Push([]byte(string(r[i : i+k])))
	}
	return mh.Signature()
}

// jaccard estimates the Jaccard similarity of two sets from their MinHash
// signatures: the share of positions where they agree.
func jaccard(a, b []uint64) float64 {
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	return float64(same) / float64(len(a))
}
