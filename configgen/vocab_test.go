package configgen

import (
	"math/rand/v2"
	"testing"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

// viewCode is code in view that grounds a topic (defer) and a task (CSV)
// of the general questions.
const viewCode = "// Sum adds the CSV rows.\nfunc Sum(rows []Row) float64 {\n\tdefer trace()\n\treturn total(rows)\n}"

// TestTemplatesReadAsTheirIntentAndLocale: every canonical template query
// (each list's first wording), read by the one classifier the analyst and
// the judge use, has the intent and the locale it was written for (terse
// and normal styles of medium difficulty, about code and about no code in
// particular); and every wording of the paraphrase banks reads as its
// locale whenever it is long enough to be sure of (three words). Paraphrases may say what they want less explicitly than a
// keyword rule catches, as developers' queries do.
func TestTemplatesReadAsTheirIntentAndLocale(t *testing.T) {
	canonical := newTemplater()
	canonical.canonical = true
	tp := newTemplater()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, loc := range vocab.Values(vocab.DimLocale) {
		for _, intent := range vocab.Values(vocab.DimIntent) {
			for _, style := range []string{vocab.StyleTerse, vocab.StyleNormal, vocab.StyleVerbose} {
				for _, ref := range vocab.Values(vocab.DimReference) {
					s := querySpec{Intent: intent, Locale: loc, Difficulty: vocab.DifficultyMedium, Style: style,
						Instruction: dialog.InstructionFreeText, Reference: ref, Language: "go", File: "calc/sum.go",
						Symbol: "Sum", OpenFiles: []string{"calc/avg.go"}, Code: viewCode}
					if style != vocab.StyleVerbose {
						q := canonical.query(s, rng)
						got := vocab.IntentOf(q)
						gotLoc, _ := vocab.DetectLocale(q)
						if got != intent || gotLoc != loc {
							t.Errorf("%s %s %s %s: %q reads as %s, %s", loc, intent, style, ref, q, got, gotLoc)
						}
					}
					for range 12 {
						q := tp.query(s, rng)
						if gotLoc, sure := vocab.DetectLocale(q); sure && gotLoc != loc {
							t.Errorf("%s %s %s %s: %q reads as %s", loc, intent, style, ref, q, gotLoc)
						}
					}
				}
			}
		}
	}
}
