package tasks

import (
	"go/scanner"
	"go/token"
	"path"
	"unicode"
	"unicode/utf8"
)

// canon is a file or body as a normalised token sequence: comments and
// white space dropped, semicolons dropped (Go inserts them at line ends,
// one-line bodies spell them), every run of letters, digits and
// underscores one token and every other character one token — so a Go
// body pasted into a Markdown file or a string gives the same sequence as
// in its source file.
type canon struct {
	toks  []string
	lines []int // line of each token, 1-based
}

// canonOf normalises src; file's extension says which comments to drop
// (.go Go comments, .py/.pyi Python comments, other files none).
func canonOf(file string, src []byte) canon {
	switch path.Ext(file) {
	case ".go":
		src = blankGoComments(src)
	case ".py", ".pyi":
		src = blankPyComments(src)
	}
	return splitTokens(src)
}

func splitTokens(src []byte) canon {
	var c canon
	line := 1
	word := -1 // start of the current word, or -1
	flush := func(end int) {
		if word >= 0 {
			c.toks = append(c.toks, string(src[word:end]))
			c.lines = append(c.lines, line)
			word = -1
		}
	}
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		switch {
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			if word < 0 {
				word = i
			}
		case unicode.IsSpace(r):
			flush(i)
			if r == '\n' {
				line++
			}
		default:
			flush(i)
			if r != ';' {
				c.toks = append(c.toks, string(src[i:i+n]))
				c.lines = append(c.lines, line)
			}
		}
		i += n
	}
	flush(len(src))
	return c
}

// blankGoComments replaces Go comments by spaces (newlines kept).
func blankGoComments(src []byte) []byte {
	out := append([]byte(nil), src...)
	fset := token.NewFileSet()
	f := fset.AddFile("", -1, len(src))
	var s scanner.Scanner
	s.Init(f, src, func(token.Position, string) {}, scanner.ScanComments)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.COMMENT {
			blank(out, f.Offset(pos), f.Offset(pos)+len(lit))
		}
	}
	return out
}

// blankPyComments replaces Python comments by spaces, skipping strings
// (quotes with any prefix, triple quotes).
func blankPyComments(src []byte) []byte {
	out := append([]byte(nil), src...)
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == '#':
			j := i
			for j < len(src) && src[j] != '\n' {
				j++
			}
			blank(out, i, j)
			i = j
		case c == '"' || c == '\'':
			q := string(c)
			if i+2 < len(src) && src[i+1] == c && src[i+2] == c {
				q = string([]byte{c, c, c})
			}
			j := i + len(q)
			for j < len(src) {
				if src[j] == '\\' {
					j += 2
					continue
				}
				if len(q) == 1 && src[j] == '\n' { // unterminated: stop at the line end
					break
				}
				if string(src[j:min(j+len(q), len(src))]) == q {
					j += len(q)
					break
				}
				j++
			}
			i = min(j, len(src))
		default:
			i++
		}
	}
	return out
}

func blank(b []byte, from, to int) {
	for i := from; i < to && i < len(b); i++ {
		if b[i] != '\n' {
			b[i] = ' '
		}
	}
}

// index returns the positions where sub occurs in c as a contiguous run.
func (c canon) index(sub []string) []int {
	var out []int
	if len(sub) == 0 {
		return nil
	}
	for i := 0; i+len(sub) <= len(c.toks); i++ {
		if c.toks[i] != sub[0] {
			continue
		}
		j := 1
		for j < len(sub) && c.toks[i+j] == sub[j] {
			j++
		}
		if j == len(sub) {
			out = append(out, i)
			i += len(sub) - 1
		}
	}
	return out
}

// similarity is 2·LCS/(len a + len b) over two token sequences (1 for
// equal sequences), computed only when a cheaper upper bound (the shared
// tokens as multisets) reaches min; below it, the bound is returned.
func similarity(a, b []string, atLeast float64) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	count := map[string]int{}
	for _, t := range a {
		count[t]++
	}
	shared := 0
	for _, t := range b {
		if count[t] > 0 {
			count[t]--
			shared++
		}
	}
	bound := 2 * float64(shared) / float64(len(a)+len(b))
	if bound < atLeast {
		return bound
	}
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return 2 * float64(prev[len(b)]) / float64(len(a)+len(b))
}
