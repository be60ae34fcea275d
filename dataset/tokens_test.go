package dataset

import (
	"slices"
	"testing"
)

// TestTokenCounts checks the embedded encodings against reference
// encodings published with tiktoken: "hello world" is [15339, 1917] in
// cl100k_base and [24912, 2375] in o200k_base (openai/tiktoken
// tests/test_encoding.py, test_simple), and "tiktoken is great!" is 6
// tokens in both (openai-cookbook, "How to count tokens with tiktoken").
// It runs with no network: the BPE files are embedded in the binary.
func TestTokenCounts(t *testing.T) {
	for _, c := range []struct {
		enc, text string
		ids       []int
		n         int
	}{
		{"cl100k_base", "hello world", []int{15339, 1917}, 2},
		{"o200k_base", "hello world", []int{24912, 2375}, 2},
		{"cl100k_base", "tiktoken is great!", nil, 6},
		{"o200k_base", "tiktoken is great!", nil, 6},
	} {
		tok, err := NewTokenizer(c.enc)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Count(c.text); got != c.n {
			t.Errorf("%s %q: %d tokens, want %d", c.enc, c.text, got, c.n)
		}
		if ids := tok.enc.EncodeOrdinary(c.text); c.ids != nil && !slices.Equal(ids, c.ids) {
			t.Errorf("%s %q: ids %v, want %v", c.enc, c.text, ids, c.ids)
		}
	}
	tok, _ := NewTokenizer("cl100k_base")
	if n := tok.Count("<|endoftext|>"); n < 2 {
		t.Errorf("<|endoftext|> is %d token(s); special-token text in data must count as text", n)
	}
	// 3 per message + role + content, and 3 for the reply: 3 + (3+1+2) + (3+1+2).
	msgs := ask("hello world")
	msgs[0].Content = "hello world"
	if got := tok.CountMessages(msgs); got != 15 {
		t.Errorf("CountMessages %d, want 15", got)
	}
	if _, err := NewTokenizer("gpt2"); err == nil {
		t.Error("an unknown encoding was accepted")
	}
}

func TestNearestRank(t *testing.T) {
	for _, c := range []struct {
		vals    []int
		p, want int
	}{{[]int{257, 656}, 95, 656}, {[]int{257, 656}, 50, 257}, {[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95, 10}, {[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 50, 5}, {[]int{7}, 95, 7}} {
		if got := nearestRank(c.vals, c.p); got != c.want {
			t.Errorf("p%d of %v = %d, want %d", c.p, c.vals, got, c.want)
		}
	}
}
