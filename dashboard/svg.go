package dashboard

import (
	"fmt"
	"html/template"
	"math"
	"strings"
)

// The plots are hand-sized inline SVG: no script, so the static page
// works from disk and the live page swaps them in as HTML. This file is
// the one place that draws; a shared plotting package can replace it.

// Bar is one bar of a chart.
type Bar struct {
	Label string
	Value float64
	// Text is printed after the bar (default: the value).
	Text string
	Bad  bool
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// HBars draws horizontal bars scaled to max(values, ref); ref > 0 adds a
// dashed reference line labelled refLabel.
func HBars(name string, bars []Bar, ref float64, refLabel string) template.HTML {
	const labelW, barW, rowH, textW = 180, 260, 22, 90
	hi := ref
	for _, b := range bars {
		hi = math.Max(hi, b.Value)
	}
	if hi <= 0 {
		hi = 1
	}
	h := rowH*len(bars) + 24
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="plot" data-plot="%s" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`, esc(name), labelW+barW+textW, h, labelW+barW+textW, h)
	for i, b := range bars {
		y := 4 + i*rowH
		w := float64(barW) * b.Value / hi
		fill := "#4e79a7"
		if b.Bad {
			fill = "#e15759"
		}
		text := b.Text
		if text == "" {
			text = fmt.Sprintf("%.3g", b.Value)
		}
		fmt.Fprintf(&s, `<text x="%d" y="%d" text-anchor="end" font-size="12">%s</text>`, labelW-6, y+14, esc(b.Label))
		fmt.Fprintf(&s, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`, labelW, y+2, w, rowH-6, fill, esc(b.Label), esc(text))
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" font-size="11" fill="#333">%s</text>`, float64(labelW)+w+4, y+14, esc(text))
	}
	if ref > 0 {
		x := float64(labelW) + float64(barW)*ref/hi
		fmt.Fprintf(&s, `<line x1="%.1f" y1="0" x2="%.1f" y2="%d" stroke="#333" stroke-dasharray="4 3"/>`, x, x, h-16)
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>`, x, h-4, esc(refLabel))
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String())
}

// Histogram draws vertical bars for counts labelled 0..n-1.
func Histogram(name, title string, counts []int) template.HTML {
	const w, h, pad = 200, 120, 18
	hi := 1
	for _, c := range counts {
		hi = max(hi, c)
	}
	bw := float64(w-2*pad) / float64(len(counts))
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="plot" data-plot="%s" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`, esc(name), w, h+20, w, h+20)
	fmt.Fprintf(&s, `<text x="%d" y="12" font-size="12" font-weight="bold">%s</text>`, pad, esc(title))
	for i, c := range counts {
		bh := float64(h-30) * float64(c) / float64(hi)
		x := float64(pad) + float64(i)*bw
		fill := "#76b7b2"
		if i == len(counts)-1 {
			fill = "#59a14f"
		}
		fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>score %d: %d turns</title></rect>`, x+2, float64(h)-bh, bw-4, bh, fill, i, c)
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%d</text>`, x+bw/2, h+14, i)
		if c > 0 {
			fmt.Fprintf(&s, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle">%d</text>`, x+bw/2, float64(h)-bh-3, c)
		}
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String())
}

// Heat draws a table of rates (0..1) with rows × columns, cells shaded by
// rate.
func Heat(name string, rows, cols []string, cell func(r, c string) (rate float64, label string, ok bool)) template.HTML {
	const cw, ch, lw, top = 70, 24, 110, 20
	w, h := lw+cw*len(cols), top+ch*len(rows)
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="plot" data-plot="%s" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`, esc(name), w, h, w, h)
	for j, c := range cols {
		fmt.Fprintf(&s, `<text x="%d" y="14" font-size="11" text-anchor="middle">%s</text>`, lw+j*cw+cw/2, esc(c))
	}
	for i, r := range rows {
		y := top + i*ch
		fmt.Fprintf(&s, `<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`, lw-6, y+16, esc(r))
		for j, c := range cols {
			rate, label, ok := cell(r, c)
			fill := "#eee"
			if ok {
				// white → green by rate
				g := int(255 - 120*rate)
				fill = fmt.Sprintf("rgb(%d,%d,%d)", int(255-200*rate), max(g, 135), int(255-200*rate))
			}
			fmt.Fprintf(&s, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#fff"><title>%s × %s: %s</title></rect>`, lw+j*cw, y, cw, ch, fill, esc(r), esc(c), esc(label))
			if ok {
				fmt.Fprintf(&s, `<text x="%d" y="%d" font-size="11" text-anchor="middle">%s</text>`, lw+j*cw+cw/2, y+16, esc(label))
			}
		}
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String())
}
