package analyst

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestReportScores(t *testing.T) {
	r := sampleReport(t)
	// Shown answers scored 5, 4, 5 (a), 3 (b), 5 (c), 5 (d), 5 (e); every
	// turn's other candidate scored 5.
	if r.Scores.Shown != [6]int{0, 0, 0, 1, 1, 5} || r.Scores.Candidates != [6]int{0, 0, 0, 1, 1, 12} {
		t.Errorf("scores %+v", r.Scores)
	}
}

// TestReportHTML parses report.html as HTML and checks that each
// dimension's SVG holds one mark per value of the profile (plus produced
// values it does not list), each with a bar per series, and that the page
// needs nothing from outside.
func TestReportHTML(t *testing.T) {
	p := loadProfile(t, "testdata/linked.yaml")
	r := sampleReport(t)
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("report.html does not parse: %v", err)
	}
	attr := func(n *html.Node, key string) (string, bool) {
		for _, a := range n.Attr {
			if a.Key == key {
				return a.Val, true
			}
		}
		return "", false
	}
	charts := map[string]*html.Node{}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "link", "img", "iframe":
				t.Errorf("the page loads a <%s>", n.Data)
			case "svg":
				if d, ok := attr(n, "data-dim"); ok {
					charts["dim:"+d] = n
				}
				if c, ok := attr(n, "data-chart"); ok {
					charts[c] = n
				}
			}
			for _, a := range n.Attr {
				if (a.Key == "src" || a.Key == "href") && a.Val != "" {
					t.Errorf("<%s %s=%q>: an outside resource", n.Data, a.Key, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	// marks returns the data-KEY of each mark group in svg, and its number
	// of bars.
	marks := func(svg *html.Node, key string) map[string]int {
		out := map[string]int{}
		for g := svg.FirstChild; g != nil; g = g.NextSibling {
			if cls, _ := attr(g, "class"); g.Data != "g" || cls != "mark" {
				continue
			}
			v, _ := attr(g, "data-"+key)
			if _, dup := out[v]; dup {
				t.Errorf("two marks for %s", v)
			}
			for c := g.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.Data == "rect" {
					out[v]++
				}
			}
		}
		return out
	}
	for _, d := range r.Dimensions {
		svg := charts["dim:"+d.Dim]
		if svg == nil {
			t.Errorf("no SVG for dimension %s", d.Dim)
			continue
		}
		got := marks(svg, "value")
		for _, w := range p.Dimensions[d.Dim] {
			if got[w.Value] != 3 {
				t.Errorf("%s = %s: %d bars, want 3 (target, produced, kept)", d.Dim, w.Value, got[w.Value])
			}
		}
		if len(got) != len(d.Values) {
			t.Errorf("%s: %d marks, want one per value (%d)", d.Dim, len(got), len(d.Values))
		}
	}
	if got := marks(charts["jsd"], "dim"); len(got) != len(r.Dimensions) {
		t.Errorf("JSD chart: %d marks, want %d", len(got), len(r.Dimensions))
	}
	if got := marks(charts["scores"], "score"); len(got) != 6 || got["5"] != 2 {
		t.Errorf("score chart marks %v", got)
	}
	for _, c := range []string{"keep-rate", "cost"} {
		if got := marks(charts[c], "cell"); len(got) != len(r.Cells) || got["explain/go"] != 1 {
			t.Errorf("%s chart marks %v, want one per cell", c, got)
		}
	}
}

func TestReportMarkdown(t *testing.T) {
	r := sampleReport(t)
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"## Fidelity report: profile", "| dimension | JSD produced (bits) | JSD kept (bits) |",
		"| explain/go | 2 | 4 | 1 | 25.0% | 0.0600 | 0.0600 |", "| 5 | 5 | 12 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Every table row has as many cells as its header.
	cols := 0
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			cols = 0
			continue
		}
		n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
		if cols == 0 {
			cols = n
		} else if n != cols {
			t.Errorf("row %q has %d separators, header %d", line, n, cols)
		}
	}
}
