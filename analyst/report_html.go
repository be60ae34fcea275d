package analyst

import (
	"fmt"
	"html/template"
	"io"

	"dialogfarm/analyst/realism"
	"strings"
)

// The HTML report is one self-contained file: inline CSS and inline SVG,
// no script, no external resource, so it opens from disk, in a CI
// artefact viewer or attached to a PR. Every plot mark carries a class and
// a data- attribute naming what it shows, and a <title> with the number.

// svgChart accumulates one SVG element.
type svgChart struct {
	b      strings.Builder
	width  int
	height int
}

const (
	chartWidth = 640
	labelWidth = 170
	barArea    = chartWidth - labelWidth - 90
)

var esc = template.HTMLEscapeString

func (c *svgChart) rect(class string, x, y, w, h float64, title string) {
	fmt.Fprintf(&c.b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`,
		class, x, y, max(w, 0.5), h, esc(title))
}

func (c *svgChart) text(class string, x, y float64, anchor, s string) {
	fmt.Fprintf(&c.b, `<text class="%s" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, class, x, y, anchor, esc(s))
}

func (c *svgChart) html(label, attrs string) template.HTML {
	return template.HTML(fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="%s" %s width="%d" height="%d" viewBox="0 0 %d %d">%s</svg>`,
		esc(label), attrs, c.width, c.height, c.width, c.height, c.b.String()))
}

// bar is one horizontal bar of a series.
type bar struct {
	class, title string
	value        float64
}

// hbars draws one group per label: a bar per series, scaled to top.
// attr names each group's data- attribute (data-value, data-cell, ...).
func hbars(label, attrs, attr string, labels []string, series func(i int) []bar, top float64, format func(float64) string) template.HTML {
	if top <= 0 {
		top = 1
	}
	c := &svgChart{width: chartWidth}
	const barH, gap = 9.0, 8.0
	y := 4.0
	for i, l := range labels {
		bars := series(i)
		fmt.Fprintf(&c.b, `<g class="mark" data-%s="%s">`, attr, esc(l))
		c.text("label", labelWidth-6, y+barH*float64(len(bars))/2+4, "end", l)
		for _, b := range bars {
			w := barArea * b.value / top
			c.rect(b.class, labelWidth, y, w, barH-1, b.title)
			c.text("num", labelWidth+w+4, y+barH-1.5, "start", format(b.value))
			y += barH
		}
		c.b.WriteString(`</g>`)
		y += gap
	}
	c.height = int(y) + 4
	return c.html(label, attrs)
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// dimensionChart is target vs produced vs kept for one dimension.
func dimensionChart(d DimReport, withKept bool) template.HTML {
	labels := make([]string, len(d.Values))
	top := 0.0
	for i, s := range d.Values {
		labels[i] = s.Value
		top = max(top, s.Target, s.Produced, s.Kept)
	}
	return hbars("target, produced and kept shares of "+d.Dim, fmt.Sprintf(`data-dim="%s"`, esc(d.Dim)), "value", labels, func(i int) []bar {
		s := d.Values[i]
		out := []bar{
			{"target", fmt.Sprintf("%s = %s: target %s", d.Dim, s.Value, pct(s.Target)), s.Target},
			{"produced", fmt.Sprintf("%s = %s: produced %s (%d configs)", d.Dim, s.Value, pct(s.Produced), s.ProducedCount), s.Produced},
		}
		if withKept {
			out = append(out, bar{"kept", fmt.Sprintf("%s = %s: kept %s (%d dialogues)", d.Dim, s.Value, pct(s.Kept), s.KeptCount), s.Kept})
		}
		return out
	}, top, pct)
}

// jsdChart is the Jensen–Shannon divergence per dimension.
func jsdChart(r *Report) template.HTML {
	labels := make([]string, len(r.Dimensions))
	top := 0.0
	for i, d := range r.Dimensions {
		labels[i] = d.Dim
		top = max(top, d.JSDProduced)
		if d.JSDKept != nil {
			top = max(top, *d.JSDKept)
		}
	}
	return hbars("Jensen–Shannon divergence from the target per dimension", `data-chart="jsd"`, "dim", labels, func(i int) []bar {
		d := r.Dimensions[i]
		out := []bar{{"produced", fmt.Sprintf("%s: JSD produced %.4f bits", d.Dim, d.JSDProduced), d.JSDProduced}}
		if d.JSDKept != nil {
			out = append(out, bar{"kept", fmt.Sprintf("%s: JSD kept %.4f bits", d.Dim, *d.JSDKept), *d.JSDKept})
		}
		return out
	}, top, func(v float64) string { return fmt.Sprintf("%.4f", v) })
}

// scoreChart is the score histogram of shown answers and candidates.
func scoreChart(r *Report) template.HTML {
	labels := []string{"no verdict", "1", "2", "3", "4", "5"}
	top := 0.0
	for i := range 6 {
		top = max(top, float64(r.Scores.Shown[i]), float64(r.Scores.Candidates[i]))
	}
	return hbars("final judge scores", `data-chart="scores"`, "score", labels, func(i int) []bar {
		return []bar{
			{"shown", fmt.Sprintf("score %s: %d shown answers", labels[i], r.Scores.Shown[i]), float64(r.Scores.Shown[i])},
			{"candidates", fmt.Sprintf("score %s: %d candidates", labels[i], r.Scores.Candidates[i]), float64(r.Scores.Candidates[i])},
		}
	}, top, func(v float64) string { return fmt.Sprintf("%.0f", v) })
}

// cellCharts are keep rate and cost per kept turn per cell.
func cellCharts(r *Report) (keep, cost template.HTML) {
	labels := make([]string, len(r.Cells))
	topCost := 0.0
	for i, c := range r.Cells {
		labels[i] = c.Cell
		if c.CostPerKeptTurn != nil {
			topCost = max(topCost, *c.CostPerKeptTurn)
		}
	}
	keep = hbars("keep rate per cell", `data-chart="keep-rate"`, "cell", labels, func(i int) []bar {
		c := r.Cells[i]
		return []bar{{"keep", fmt.Sprintf("%s: %d of %d turns kept (%s)", c.Cell, c.KeptTurns, c.Turns, pct(c.KeepRate)), c.KeepRate}}
	}, 1, pct)
	cost = hbars("cost per kept turn per cell", `data-chart="cost"`, "cell", labels, func(i int) []bar {
		c := r.Cells[i]
		v, title := 0.0, fmt.Sprintf("%s: no kept turn (cost %.4f USD)", c.Cell, c.CostUSD)
		if c.CostPerKeptTurn != nil {
			v, title = *c.CostPerKeptTurn, fmt.Sprintf("%s: %.4f USD per kept turn", c.Cell, *c.CostPerKeptTurn)
		}
		return []bar{{"cost", title, v}}
	}, topCost, func(v float64) string { return fmt.Sprintf("$%.4f", v) })
	return keep, cost
}

var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>dialogfarm report: {{.R.Profile}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:760px;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em}h3{font-size:1em;margin:1.2em 0 .3em}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:right}
td:first-child,th:first-child{text-align:left}
.legend span{display:inline-block;margin-right:1em}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
svg text{font-size:11px;fill:#333}
.banner{background:#fdecea;border:2px solid #c0392b;color:#7b1d12;padding:.6em 1em;font-weight:bold;margin:1em 0}
.target{fill:#9aa5b1}.produced{fill:#3b82c4}.kept{fill:#2f9e62}.shown{fill:#2f9e62}.candidates{fill:#9aa5b1}.keep{fill:#2f9e62}.cost{fill:#c4793b}
</style>
</head>
<body>
{{if .Banner}}<p class="banner" role="alert" data-offline="{{.R.Kept.OfflineDialogues}}">{{.Banner}}.</p>
{{end}}<h1>Fidelity report: profile {{.R.Profile}}</h1>
<table>
<tr><th>configs</th><td>{{.R.Configs}}</td></tr>
<tr><th>dialogues recorded</th><td>{{.R.Keep.Dialogues}}</td></tr>
<tr><th>dialogues with a kept turn</th><td>{{.R.Keep.KeptDialogues}} ({{.DialogueRate}})</td></tr>
<tr><th>turns recorded</th><td>{{.R.Keep.Turns}}</td></tr>
<tr><th>turns kept</th><td>{{.R.Keep.KeptTurns}} ({{.TurnRate}})</td></tr>
</table>

<h2>Provenance</h2>
<table class="provenance">
{{range .Provenance}}<tr><th>{{index . 0}}</th><td style="text-align:left">{{index . 1}}</td></tr>
{{end}}</table>

<h2>Target, produced and kept per dimension</h2>
<p class="legend"><span><i class="target" style="background:#9aa5b1"></i>target</span><span><i style="background:#3b82c4"></i>produced (configs)</span>{{if .WithKept}}<span><i style="background:#2f9e62"></i>kept (dialogues with a kept turn)</span>{{end}}</p>
{{range .Dims}}<h3>{{.Name}} <small>JSD produced {{.JSDProduced}}{{if .JSDKept}}, kept {{.JSDKept}}{{end}} bits</small></h3>
{{.SVG}}
{{end}}
{{if .Moves}}<h2>Moved to fit the repositories</h2>
<p>{{.FitNote}}</p>
<table>
<tr><th>dimension</th><th>value</th><th>profile</th><th>planned</th><th>why</th></tr>
{{range .Moves}}<tr><td>{{.Dim}}</td><td>{{.Value}}</td><td>{{.From}}</td><td>{{.To}}</td><td style="text-align:left">{{.Reason}}</td></tr>
{{end}}</table>
{{end}}
<h2>Jensen–Shannon divergence from the target</h2>
<p>0 bits: the same distribution; 1 bit: nothing in common. Blue: produced configs; green: kept dialogues.</p>
{{.JSD}}

<h2>Judge scores</h2>
<p>Final scores rounded to whole points. Green: the answer the plugin showed, per turn; grey: every judged candidate.</p>
{{.Scores}}
{{if .Cells}}
<h2>Turn keep rate per cell ({{.CellDims}})</h2>
{{.Keep}}
<h2>Cost per kept turn per cell (USD)</h2>
{{.Cost}}
<table>
<tr><th>cell</th><th>dialogues</th><th>turns</th><th>kept turns</th><th>turn keep rate</th><th>cost USD</th><th>cost / kept turn</th></tr>
{{range .Cells}}<tr><td>{{.Cell}}</td><td>{{.Dialogues}}</td><td>{{.Turns}}</td><td>{{.KeptTurns}}</td><td>{{.KeepRate}}</td><td>{{.Cost}}</td><td>{{.PerKept}}</td></tr>
{{end}}</table>
{{end}}
{{with .Realism}}
<h2 id="realism">Query realism</h2>
<p>Generated first queries against {{.Reference}} ({{.Overall.Generated.N}} generated, {{.Overall.Reference.N}} reference). Length KS {{printf "%.3f" .Overall.KS}}, vocabulary Jaccard {{printf "%.3f" .Overall.Jaccard}}, coverage {{printf "%.3f" .Overall.VocabCoverage}}, centroid distance {{printf "%.3f" .Overall.Centroid}}, locale JSD {{printf "%.4f" .LocaleJSD}} bits. {{.Flagged}} flags.</p>
<table class="realism">
<tr><th>measure</th><th>generated</th><th>reference</th></tr>
<tr><td>mean length (words)</td><td>{{printf "%.2f" .Overall.Generated.MeanLength}}</td><td>{{printf "%.2f" .Overall.Reference.MeanLength}}</td></tr>
<tr><td>distinct-1</td><td>{{printf "%.3f" .Overall.Generated.Distinct1}}</td><td>{{printf "%.3f" .Overall.Reference.Distinct1}}</td></tr>
<tr><td>distinct-2</td><td>{{printf "%.3f" .Overall.Generated.Distinct2}}</td><td>{{printf "%.3f" .Overall.Reference.Distinct2}}</td></tr>
<tr><td>distinct-3</td><td>{{printf "%.3f" .Overall.Generated.Distinct3}}</td><td>{{printf "%.3f" .Overall.Reference.Distinct3}}</td></tr>
<tr><td>compression ratio (gzip)</td><td>{{printf "%.2f" .Overall.Generated.Compression}}</td><td>{{printf "%.2f" .Overall.Reference.Compression}}</td></tr>
<tr><td>share with code</td><td>{{printf "%.3f" .Overall.Generated.CodeShare}}</td><td>{{printf "%.3f" .Overall.Reference.CodeShare}}</td></tr>
<tr><td>terse rate</td><td>{{printf "%.3f" .Overall.Generated.TerseRate}}</td><td>{{printf "%.3f" .Overall.Reference.TerseRate}}</td></tr>
<tr><td>typo rate</td><td>{{printf "%.3f" .Overall.Generated.TypoRate}}</td><td>{{printf "%.3f" .Overall.Reference.TypoRate}}</td></tr>
<tr><td>embedding spread</td><td>{{printf "%.3f" .Overall.Generated.Spread}}</td><td>{{printf "%.3f" .Overall.Reference.Spread}}</td></tr>
</table>
<table class="realism-cells">
<tr><th>cell (intent/locale)</th><th>generated</th><th>reference</th><th>KS</th><th>distinct-2</th><th>flags</th></tr>
{{range .Cells}}<tr data-cell="{{.Cell}}"><td>{{.Cell}}</td><td>{{.Generated.N}}</td><td>{{.Reference.N}}</td><td>{{printf "%.2f" .KS}}</td><td>{{printf "%.2f" .Generated.Distinct2}} / {{printf "%.2f" .Reference.Distinct2}}</td><td>{{range .Flags}}{{.}} {{end}}</td></tr>
{{end}}</table>
{{end}}
</body>
</html>
`))

// WriteHTML writes the report as one self-contained HTML page with inline
// SVG plots: target vs produced vs kept per dimension, JSD per dimension,
// score histograms, keep rate and cost per kept turn per cell.
func (r *Report) WriteHTML(w io.Writer) error {
	type dim struct {
		Name, JSDProduced, JSDKept string
		SVG                        template.HTML
	}
	type move struct{ Dim, Value, From, To, Reason string }
	type cell struct {
		Cell                        string
		Dialogues, Turns, KeptTurns int
		KeepRate, Cost, PerKept     string
	}
	data := struct {
		R                                        *Report
		Banner, TurnRate, DialogueRate, CellDims string
		Provenance                               [][2]string
		WithKept                                 bool
		Dims                                     []dim
		JSD, Scores, Keep, Cost                  template.HTML
		Cells                                    []cell
		Realism                                  *realism.Report
		FitNote                                  string
		Moves                                    []move
	}{R: r, Realism: r.Realism, Banner: r.Kept.OfflineHeadline("kept dialogues"), TurnRate: pct(r.Keep.TurnRate), DialogueRate: pct(r.Keep.DialogueRate),
		Provenance: r.ProvenanceLines(), CellDims: strings.Join(r.CellDims, " × "), WithKept: r.Dialogues > 0}
	for _, d := range r.Dimensions {
		x := dim{Name: d.Dim, JSDProduced: fmt.Sprintf("%.4f", d.JSDProduced), SVG: dimensionChart(d, data.WithKept)}
		if d.JSDKept != nil {
			x.JSDKept = fmt.Sprintf("%.4f", *d.JSDKept)
		}
		data.Dims = append(data.Dims, x)
	}
	if f := r.Fit; f != nil {
		data.FitNote = "The plan was fitted to what the repositories can realise"
		if f.Index != nil {
			data.FitNote += " (" + f.Index.Describe() + ")"
		}
		data.FitNote += ": the target columns above are the profile's, the planned share here is what the quotas followed."
		if line := f.CapacityLine(); line != "" {
			data.FitNote += " " + strings.ToUpper(line[:1]) + line[1:] + "."
		}
		for _, m := range f.Moves {
			data.Moves = append(data.Moves, move{m.Dim, m.Value, pct(m.From), pct(m.To), m.Reason})
		}
	}
	data.JSD, data.Scores = jsdChart(r), scoreChart(r)
	if len(r.Cells) > 0 {
		data.Keep, data.Cost = cellCharts(r)
	}
	for _, c := range r.Cells {
		per := "-"
		if c.CostPerKeptTurn != nil {
			per = fmt.Sprintf("%.4f", *c.CostPerKeptTurn)
		}
		data.Cells = append(data.Cells, cell{c.Cell, c.Dialogues, c.Turns, c.KeptTurns, pct(c.KeepRate), fmt.Sprintf("%.4f", c.CostUSD), per})
	}
	if err := htmlPage.Execute(w, data); err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	return nil
}
