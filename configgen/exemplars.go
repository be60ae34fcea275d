package configgen

import (
	"math/rand/v2"

	"dialogfarm/redact"
)

// Exemplar is a real developer's query and its cell, from interaction
// logs; the query model's prompt shows a few of the same cell.
type Exemplar struct {
	Query, Intent, Locale, Style string
}

// exemplarsPerPrompt is how many exemplars a prompt shows.
const exemplarsPerPrompt = 3

// exemplarBank indexes redacted exemplars by cell, coarser cells second.
type exemplarBank struct {
	byKey map[string][]string
}

// newExemplarBank redacts every exemplar (secrets become placeholders, as
// in the sanitised workspace) and indexes it by intent/locale/style,
// intent/locale and locale.
func newExemplarBank(ex []Exemplar, d *redact.Detector) *exemplarBank {
	b := &exemplarBank{byKey: map[string][]string{}}
	r := redact.NewRedactor(d)
	for _, e := range ex {
		q, _ := r.Redact(e.Query)
		for _, k := range []string{e.Intent + "/" + e.Locale + "/" + e.Style, e.Intent + "/" + e.Locale, e.Locale} {
			b.byKey[k] = append(b.byKey[k], q)
		}
	}
	return b
}

// pick draws up to exemplarsPerPrompt exemplars of the finest cell that
// has any, stably for the seed and config.
func (b *exemplarBank) pick(intent, locale, style string, seed int64, i int) []string {
	for _, k := range []string{intent + "/" + locale + "/" + style, intent + "/" + locale, locale} {
		pool := b.byKey[k]
		if len(pool) == 0 {
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(seed)^0x6578656d706c, uint64(i)))
		var out []string
		for _, j := range rng.Perm(len(pool))[:min(exemplarsPerPrompt, len(pool))] {
			out = append(out, pool[j])
		}
		return out
	}
	return nil
}
