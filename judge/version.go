package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"

	"dialogfarm/dialog/vocab"
)

// RubricVersion names the scoring instructions a judge with these rubric
// overrides uses: "sha256:" and the first 12 hex digits of a hash over the
// judge's system prompt, the score scale and every intent's rubric. Two
// runs judged with the same text get the same version; any edit to a
// rubric changes it. A dataset card records it so scores from different
// rubrics are not mixed up.
func RubricVersion(overrides map[string]string) string {
	rubrics := DefaultRubrics()
	for intent, text := range overrides {
		if n := vocab.Intent(intent); n != "" {
			rubrics[n] = text
		}
	}
	h := sha256.New()
	for _, s := range []string{systemPrompt, scaleText} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, intent := range slices.Sorted(maps.Keys(rubrics)) {
		h.Write([]byte(intent))
		h.Write([]byte{0})
		h.Write([]byte(rubrics[intent]))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:12]
}
