package profiles

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// RepoIndex is what a set of repositories can realise, as configgen's
// index of usable files sees it (configgen.IndexRepos makes it): the
// languages with usable files, and per language and cursor behaviour the
// number of distinct targets (a cursor position or a selected region on a
// file) a config can be placed on.
type RepoIndex struct {
	// Files counts usable files per language.
	Files map[string]int `json:"files"`
	// Targets counts distinct targets per language, then cursor behaviour.
	Targets map[string]map[string]int `json:"targets"`
	// OpenFiles marks the languages with a usable file whose repository
	// holds another secret-free file the open_files reference can open.
	OpenFiles map[string]bool `json:"open_files"`
}

// Realises reports whether some file of lang can take cursor behaviour c.
func (ix *RepoIndex) Realises(lang, c string) bool { return ix.Targets[lang][c] > 0 }

// LanguageTargets counts lang's targets over every cursor behaviour.
func (ix *RepoIndex) LanguageTargets(lang string) int {
	n := 0
	for _, k := range ix.Targets[lang] {
		n += k
	}
	return n
}

// Describe says in one line what the repositories hold, per language.
func (ix *RepoIndex) Describe() string {
	var parts []string
	for _, lang := range slices.Sorted(maps.Keys(ix.Files)) {
		if ix.Files[lang] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d %s (%d targets)", lang, ix.Files[lang], plural(ix.Files[lang], "file"), ix.LanguageTargets(lang)))
		}
	}
	if len(parts) == 0 {
		return "no usable file"
	}
	return strings.Join(parts, ", ")
}

// Move is one value whose share the fit to the repositories changed.
type Move struct {
	Dim   string  `json:"dim"`
	Value string  `json:"value"`
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	// Reason says why, in a few words ("no usable java file").
	Reason string `json:"reason"`
}

// Fit is how a plan was fitted to its repositories: what they hold, the
// shares the quotas follow instead of the profile's, and what moved.
type Fit struct {
	// Asked is the N asked for; the plan's N is smaller only when the
	// repositories hold fewer distinct targets (Capacity).
	Asked    int `json:"asked"`
	Capacity int `json:"capacity"`
	// Targets are the fitted shares per dimension: the quotas are within
	// one unit of N times these.
	Targets map[string]map[string]float64 `json:"targets"`
	Moves   []Move                        `json:"moves,omitempty"`
	// Constraints are the combinations the repositories add (a language
	// whose files cannot take some cursor behaviours).
	Constraints []Constraint `json:"constraints,omitempty"`
	Index       *RepoIndex   `json:"index,omitempty"`
}

// CapacityLine says in one line that the repositories cannot hold the N
// asked, or "" when they can.
func (f *Fit) CapacityLine() string {
	if f == nil || f.Asked <= f.Capacity {
		return ""
	}
	return fmt.Sprintf("the repositories hold %d distinct targets for this profile (a cursor or selection on a usable file); planned %d dialogues, not the %d asked",
		f.Capacity, f.Capacity, f.Asked)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
