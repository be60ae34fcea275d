package textutil

import "strings"

// Wrapper breaks text into lines no longer than Width.
type Wrapper struct {
	Width  int
	Indent string
}

// NewWrapper returns a Wrapper for the given width.
func NewWrapper(width int) *Wrapper {
	if width < 1 {
		width = 1
	}
	return &Wrapper{Width: width}
}

// Wrap splits text on spaces and fills lines greedily.
func (w *Wrapper) Wrap(text string) []string {
	var lines []string
	line := w.Indent
	for _, word := range strings.Fields(text) {
		if len(line)+len(word)+1 > w.Width && strings.TrimSpace(line) != "" {
			lines = append(lines, line)
			line = w.Indent
		}
		if strings.TrimSpace(line) != "" {
			line += " "
		}
		line += word
	}
	if strings.TrimSpace(line) != "" {
		lines = append(lines, line)
	}
	return lines
}

// Longest returns the length of the longest line.
func (w *Wrapper) Longest(lines []string) int {
	best := 0
	for _, l := range lines {
		if len(l) > best {
			best = len(l)
		}
	}
	return best
}
