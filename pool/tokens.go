package pool

import (
	"unicode"

	"dialogfarm/dialog"
)

// CountTokens estimates the tokens of text for servers that report no
// usage, in the spirit of BPE tokenizers: a run of letters or digits costs
// one token per 4 characters (rounded up), a Han, kana or Hangul character
// one token, every other non-space character one token. It is an estimate;
// candidates carrying it are marked TokensCounted.
func CountTokens(text string) int {
	n, run := 0, 0
	flush := func() {
		n += (run + 3) / 4
		run = 0
	}
	for _, r := range text {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			flush()
			n++
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			run++
		case unicode.IsSpace(r):
			flush()
		default:
			flush()
			n++
		}
	}
	flush()
	return n
}

// countPrompt estimates a request's prompt tokens: its messages' contents
// plus 4 tokens of framing per message, as OpenAI's chat format costs.
func countPrompt(msgs []dialog.Message) int {
	n := 3
	for _, m := range msgs {
		n += 4 + CountTokens(m.Content)
	}
	return n
}

// cost is the estimated USD cost of a call at the member's prices.
func (m MemberConfig) cost(prompt, completion int) float64 {
	return (float64(prompt)*m.InputPrice + float64(completion)*m.OutputPrice) / 1e6
}
