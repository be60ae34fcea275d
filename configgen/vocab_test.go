package configgen

import (
	"math/rand/v2"
	"testing"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

// TestTemplatesReadAsTheirIntentAndLocale: every template query, read by
// the one classifier the analyst and the judge use, has the intent and
// the locale it was written for (terse and normal styles of medium
// difficulty, about code and about no code in particular).
func TestTemplatesReadAsTheirIntentAndLocale(t *testing.T) {
	tp := newTemplater()
	rng := rand.New(rand.NewPCG(1, 2))
	bad := 0
	for _, loc := range vocab.Values(vocab.DimLocale) {
		for _, intent := range vocab.Values(vocab.DimIntent) {
			for _, style := range []string{vocab.StyleTerse, vocab.StyleNormal} {
				for _, ref := range vocab.Values(vocab.DimReference) {
					s := querySpec{Intent: intent, Locale: loc, Difficulty: vocab.DifficultyMedium, Style: style,
						Instruction: dialog.InstructionFreeText, Reference: ref, Language: "go", File: "calc/sum.go",
						Symbol: "Sum", OpenFiles: []string{"calc/avg.go"}}
					q := tp.query(s, rng)
					got := vocab.IntentOf(q)
					gotLoc, _ := vocab.DetectLocale(q)
					if got != intent || gotLoc != loc {
						bad++
						t.Errorf("%s %s %s %s: %q reads as %s, %s", loc, intent, style, ref, q, got, gotLoc)
					}
				}
			}
		}
	}
}
