package pipeline

import (
	"fmt"
	"io"
	"strings"
	"time"

	"dialogfarm/driver"
)

// progressPrinter prints one line per recorded config: a bar, counts, the
// rate and an ETA from the mean time per config so far.
func progressPrinter(w io.Writer) func(driver.Progress) {
	return func(p driver.Progress) {
		if w == nil || p.Total == 0 {
			return
		}
		const width = 24
		filled := width * p.Done / p.Total
		eta := "?"
		if p.Done > 0 {
			left := time.Duration(float64(p.Elapsed) / float64(p.Done) * float64(p.Total-p.Done))
			eta = left.Round(time.Second).String()
		}
		status := p.Last.Status
		if p.Last.FailedStep != "" {
			status += " at " + p.Last.FailedStep
		}
		fmt.Fprintf(w, "drive [%s%s] %d/%d ok=%d failed=%d elapsed=%s eta=%s  %s %s\n",
			strings.Repeat("#", filled), strings.Repeat(".", width-filled), p.Done, p.Total, p.OK, p.Failed,
			p.Elapsed.Round(time.Second), eta, p.Last.ConfigID, status)
	}
}
