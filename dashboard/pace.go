package dashboard

import (
	"time"

	"dialogfarm/dialog"
)

// Pace is how fast a run recorded its dialogues: the records over the
// span from the first one's start to the last one's end. `dialogfarm
// status`, the live dashboard of `serve` and every dashboard.html take
// their dialogues per minute and ETA from it, so they agree.
type Pace struct {
	first, last time.Time
	done        int
}

// Add counts one recorded dialogue.
func (p *Pace) Add(d dialog.Dialogue) {
	p.done++
	if d.StartedAt.IsZero() {
		return
	}
	if p.first.IsZero() || d.StartedAt.Before(p.first) {
		p.first = d.StartedAt
	}
	if end := d.StartedAt.Add(time.Duration(d.Seconds * float64(time.Second))); end.After(p.last) {
		p.last = end
	}
}

// Last is when the last record ended.
func (p Pace) Last() time.Time { return p.last }

// PerMinute is dialogues per minute (0 before two records set a span).
func (p Pace) PerMinute() float64 {
	if span := p.last.Sub(p.first); p.done > 0 && span > 0 {
		return float64(p.done) / span.Minutes()
	}
	return 0
}

// ETA is the time the rest of total takes at that rate (0: unknown or
// done).
func (p Pace) ETA(total int) time.Duration {
	rate := p.PerMinute()
	if rate <= 0 || total <= p.done {
		return 0
	}
	return time.Duration(float64(total-p.done) / rate * float64(time.Minute))
}
