package dashboard

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"slices"
	"time"

	"dialogfarm/dialog"
	"dialogfarm/internal/runfiles"
)

//go:embed dashboard.html.tmpl
var files embed.FS

// File is the static dashboard written next to report.json.
const File = "dashboard.html"

// Template parses the dashboard's templates ("panel", "page", "css");
// link maps a path relative to the run folder to a URL.
func Template(link func(rel string) string) *template.Template {
	funcs := template.FuncMap{
		"pct": func(a, b int) int {
			if b == 0 {
				return 0
			}
			return 100 * a / b
		},
		"eta": func(s float64) string {
			if s <= 0 {
				return "–"
			}
			return (time.Duration(s) * time.Second).String()
		},
		"deref": func(p *float64) float64 { return *p },
		"link":  link,
		"hist": func(s IntentScores) template.HTML {
			return Histogram("scores-"+s.Intent, s.Intent, s.Counts[:])
		},
		"keep":     keepPlot,
		"counts":   dialog.Counts,
		"jsd":      jsdPlot,
		"failbars": failPlot,
	}
	return template.Must(template.New("dashboard").Funcs(funcs).ParseFS(files, "dashboard.html.tmpl"))
}

func keepPlot(cells []KeepCell) template.HTML {
	var rows, cols []string
	m := map[[2]string]KeepCell{}
	for _, c := range cells {
		if !slices.Contains(rows, c.Intent) {
			rows = append(rows, c.Intent)
		}
		if !slices.Contains(cols, c.Language) {
			cols = append(cols, c.Language)
		}
		m[[2]string{c.Intent, c.Language}] = c
	}
	slices.Sort(cols)
	return Heat("keep", rows, cols, func(r, c string) (float64, string, bool) {
		k, ok := m[[2]string{r, c}]
		return k.Rate, fmt.Sprintf("%.0f%% of %d", 100*k.Rate, k.Turns), ok
	})
}

func jsdPlot(js []JSD) template.HTML {
	var bars []Bar
	for _, j := range js {
		bars = append(bars, Bar{Label: j.Dim + " produced", Value: j.Produced, Bad: j.Produced > JSDTarget})
		if j.Kept != nil {
			bars = append(bars, Bar{Label: j.Dim + " kept", Value: *j.Kept, Bad: *j.Kept > JSDTarget})
		}
	}
	return HBars("jsd", bars, JSDTarget, "0.02")
}

func failPlot(fs []FailureClass) template.HTML {
	var bars []Bar
	for _, f := range fs {
		bars = append(bars, Bar{Label: f.Class, Value: float64(len(f.Failures)), Text: fmt.Sprint(len(f.Failures))})
	}
	return HBars("failures", bars, 0, "")
}

// WritePage writes the whole page (static links are relative paths).
func WritePage(w io.Writer, d *Data) error {
	return Template(func(rel string) string { return rel }).ExecuteTemplate(w, "page", d)
}

// WriteFile writes DIR/dashboard.html.
func WriteFile(dir string, d *Data) error {
	var b bytes.Buffer
	if err := WritePage(&b, d); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return runfiles.WriteAtomic(filepath.Join(dir, File), b.Bytes())
}
