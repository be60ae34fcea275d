package redact

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"dialogfarm/internal/runfiles"
)

// Minus returns what s counts beyond before (distinct secrets and places).
func (s Stats) Minus(before Stats) Stats {
	d := Stats{Secrets: s.Secrets - before.Secrets, Occurrences: s.Occurrences - before.Occurrences, PerRule: map[string]int{}}
	for k, v := range s.PerRule {
		if n := v - before.PerRule[k]; n > 0 {
			d.PerRule[k] = n
		}
	}
	return d
}

// Redactions is the content of a run's redactions.json: the sanitised
// copies and the counts per rule. It never holds a secret.
type Redactions struct {
	Repos []Copy `json:"repos"`
	// Queries counts secrets found in chat configs' query texts (new ones
	// only: a secret already seen in a repository keeps its placeholder
	// and counts there).
	Queries Stats `json:"queries"`
	// Total is the sum over repositories and queries.
	Total Stats `json:"total"`
}

// Find returns the copy of source, if there is one.
func (rs Redactions) Find(source string) (Copy, bool) {
	for _, c := range rs.Repos {
		if c.Source == source {
			return c, true
		}
	}
	return Copy{}, false
}

// IsCopy says whether dir is one of the sanitised copies.
func (rs Redactions) IsCopy(dir string) bool {
	for _, c := range rs.Repos {
		if c.Dir == dir {
			return true
		}
	}
	return false
}

// Put records c, replacing the record of the same source, and recomputes
// Total.
func (rs *Redactions) Put(c Copy) {
	for i := range rs.Repos {
		if rs.Repos[i].Source == c.Source {
			rs.Repos[i] = c
			rs.total()
			return
		}
	}
	rs.Repos = append(rs.Repos, c)
	rs.total()
}

// SetQueries records the query counts and recomputes Total.
func (rs *Redactions) SetQueries(s Stats) {
	rs.Queries = s
	rs.total()
}

func (rs *Redactions) total() {
	rs.Total = Stats{PerRule: map[string]int{}}
	for _, c := range rs.Repos {
		rs.Total.Add(c.Stats)
	}
	rs.Total.Add(rs.Queries)
}

// ReadRedactions reads a redactions.json; a missing file is an empty
// record.
func ReadRedactions(path string) (Redactions, error) {
	var rs Redactions
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rs, nil
	}
	if err != nil {
		return rs, fmt.Errorf("read redactions: %w", err)
	}
	if err := json.Unmarshal(data, &rs); err != nil {
		return rs, fmt.Errorf("read redactions %s: %w", path, err)
	}
	return rs, nil
}

// WriteRedactions writes rs to path atomically, readable by the owner only.
func WriteRedactions(path string, rs Redactions) error {
	data, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return fmt.Errorf("write redactions: %w", err)
	}
	if err := runfiles.WriteAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("write redactions: %w", err)
	}
	return nil
}
