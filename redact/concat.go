package redact

import (
	"regexp"
	"strings"
)

// A secret split across string literals on one line ("sk_live_" +
// "4eC39…", 'ghp_' '…' in Python, `ghp_${"…"}`) is found by joining the
// literals of the line and scanning the joined text; a finding there is
// mapped back onto the pieces it covers, which share a Finding.Join.

// piece is the content of one string literal (quotes excluded), as a span
// of the scanned text; brk says it is not joined to the piece before.
type piece struct {
	start, end int
	brk        bool
}

// joiner is what may stand between two joined literals: nothing but
// blanks (Python's implicit concatenation) or one concatenation operator
// (+ . .. || & ~).
var joiner = regexp.MustCompile(`^[ \t]*(?:\+|\.\.?|\|\||&|~)?[ \t]*$`)

// minJoined is the shortest joined text worth scanning.
const minJoined = 12

// linePieces returns the literals of text[from:to], one line.
func linePieces(text string, from, to int) []piece {
	var out []piece
	prevEnd := -1 // offset after the previous literal's closing quote
	for i := from; i < to; i++ {
		q := text[i]
		if q != '"' && q != '\'' && q != '`' {
			continue
		}
		joined := prevEnd >= 0 && joiner.MatchString(text[prevEnd:i])
		ps, end, ok := literal(text, i, to)
		if !ok {
			return out
		}
		for k := range ps {
			if k == 0 {
				ps[k].brk = !joined
			}
			out = append(out, ps[k])
		}
		prevEnd, i = end, end-1
	}
	return out
}

// literal reads the literal whose opening quote is at text[at]: its
// pieces (a template literal's text and its ${"…"} literals; a piece after
// any other ${expression} is not joined to the one before) and the offset
// after its closing quote. ok is false when the literal does not end on the
// line.
func literal(text string, at, to int) (ps []piece, end int, ok bool) {
	q := text[at]
	start := at + 1
	brk := false
	for i := start; i < to; i++ {
		switch c := text[i]; {
		case c == '\\':
			i++
		case c == q:
			ps = append(ps, piece{start: start, end: i, brk: brk})
			return ps, i + 1, true
		case q == '`' && c == '$' && i+1 < to && text[i+1] == '{':
			close := strings.IndexByte(text[i:to], '}')
			if close < 0 {
				return nil, 0, false
			}
			ps = append(ps, piece{start: start, end: i, brk: brk})
			inner := strings.TrimSpace(text[i+2 : i+close])
			if len(inner) >= 2 && (inner[0] == '"' || inner[0] == '\'') && inner[len(inner)-1] == inner[0] {
				off := i + 2 + strings.Index(text[i+2:i+close], inner)
				ps = append(ps, piece{start: off + 1, end: off + len(inner) - 1})
				brk = false
			} else {
				brk = true
			}
			start = i + close + 1
			i = start - 1
		}
	}
	return nil, 0, false
}

// joinedGroup is a run of joined pieces on one line.
type joinedGroup struct {
	lineStart, lineEnd int
	pieces             []piece
}

// joinedGroups returns the groups of two or more joined literals of text
// whose joined content is at least minJoined bytes long.
func joinedGroups(text string) []joinedGroup {
	var out []joinedGroup
	for from := 0; from < len(text); {
		to := strings.IndexByte(text[from:], '\n')
		if to < 0 {
			to = len(text)
		} else {
			to += from
		}
		if strings.Count(text[from:to], `"`)+strings.Count(text[from:to], `'`)+strings.Count(text[from:to], "`") >= 4 {
			ps := linePieces(text, from, to)
			for i := 0; i < len(ps); {
				j, n := i+1, ps[i].end-ps[i].start
				for j < len(ps) && !ps[j].brk {
					n += ps[j].end - ps[j].start
					j++
				}
				if j-i >= 2 && n >= minJoined {
					out = append(out, joinedGroup{lineStart: from, lineEnd: to, pieces: ps[i:j]})
				}
				i = j
			}
		}
		from = to + 1
	}
	return out
}

// joinedFindings scans each joined group as one literal, in one text of
// synthetic lines, and maps the findings that cover two or more pieces
// back onto them. scan is the detector's plain scan. join numbers the
// groups from next.
func joinedFindings(text string, scan func(string) []Finding, next int) []Finding {
	groups := joinedGroups(text)
	if len(groups) == 0 {
		return nil
	}
	var synth strings.Builder
	offs := make([]int, len(groups)) // where each group's joined content starts in synth
	ends := make([]int, len(groups))
	for gi, g := range groups {
		first, last := g.pieces[0], g.pieces[len(g.pieces)-1]
		synth.WriteString(text[g.lineStart:first.start])
		offs[gi] = synth.Len()
		for _, p := range g.pieces {
			synth.WriteString(text[p.start:p.end])
		}
		ends[gi] = synth.Len()
		synth.WriteString(text[last.end:g.lineEnd])
		synth.WriteByte('\n')
	}
	var out []Finding
	for _, f := range scan(synth.String()) {
		for gi, g := range groups {
			if f.End <= offs[gi] || f.Start >= ends[gi] {
				continue
			}
			var parts []Finding
			at := offs[gi]
			for _, p := range g.pieces {
				n := p.end - p.start
				lo, hi := max(f.Start, at), min(f.End, at+n)
				if lo < hi {
					parts = append(parts, Finding{Rule: f.Rule, Start: p.start + lo - at, End: p.start + hi - at, Join: next})
				}
				at += n
			}
			if len(parts) >= 2 {
				out = append(out, parts...)
				next++
			}
		}
	}
	return out
}
