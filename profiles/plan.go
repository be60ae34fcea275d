package profiles

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/runfiles"
)

// PlanVersion is the plan.json format version.
const PlanVersion = 1

// Plan is a production plan: how many dialogues to produce in each cell of
// the profile (one value per dimension). The analyst makes it; configgen
// turns each counted cell into that many chat configs.
type Plan struct {
	Version     int    `json:"version"`
	ID          string `json:"id"`
	Profile     string `json:"profile"`
	ProfileHash string `json:"profile_sha256"`
	Seed        int64  `json:"seed"`
	N           int    `json:"n"`
	// Dimensions is the canonical dimension order of Cell.Values keys.
	Dimensions []string `json:"dimensions"`
	// Targets are the profile's normalised weights; Quotas the integer
	// number of dialogues per value (summing to N in each dimension).
	Targets map[string]map[string]float64 `json:"targets"`
	Quotas  map[string]map[string]int     `json:"quotas"`
	Cells   []Cell                        `json:"cells"`
	// Fit, when the plan was made for repositories, says what they hold
	// and what moved; the quotas then follow Fit.Targets.
	Fit *Fit `json:"fit,omitempty"`
	// Tuning, when tune re-weighted the plan, says how: its cells
	// oversample where the judge keeps less, so the quotas follow no
	// target shares.
	Tuning *Tuning `json:"tuning,omitempty"`
}

// Tuning is how tune re-weighted a plan so that the kept dialogues, not
// the produced ones, match the profile.
type Tuning struct {
	// Round is the tuning round that wrote the plan (1 after the pilot).
	Round int `json:"round"`
	// MaxFactor caps how many times its fitted share a cell is
	// oversampled.
	MaxFactor float64 `json:"max_factor"`
	// ExpectedKept is each dimension's share among the dialogues the
	// keep-rate model expects to be kept.
	ExpectedKept map[string]map[string]float64 `json:"expected_kept"`
	// Untuned says the plan is the fitted profile's own: at its size the
	// reweighted plan was expected to keep dialogues further from the
	// target (a few dialogues cannot round to the reweighted shares).
	Untuned bool `json:"untuned,omitempty"`
}

// Cell is one combination of dimension values and its dialogue count.
type Cell struct {
	Key    string            `json:"key"`
	Values map[string]string `json:"values"`
	Count  int               `json:"count"`
}

// CellKey joins a combination's values in canonical dimension order.
func CellKey(values map[string]string) string {
	parts := make([]string, 0, 10)
	for _, dim := range vocab.Dimensions() {
		parts = append(parts, values[dim])
	}
	return strings.Join(parts, "/")
}

// Rows expands the plan's cells into one combination per dialogue, in cell
// order; row i becomes config i.
func (pl *Plan) Rows() []map[string]string {
	out := make([]map[string]string, 0, pl.N)
	for _, c := range pl.Cells {
		for range c.Count {
			out = append(out, c.Values)
		}
	}
	return out
}

// Check verifies the plan's invariants against its profile: the cells sum
// to N, every cell satisfies the constraints (the fit's too), each
// dimension's counts equal its quotas and every quota is within one unit
// of N times the target (the fitted target when the plan has a Fit; a
// tuned plan's quotas follow no target).
func (pl *Plan) Check(p *Profile) error {
	total := 0
	counts := map[string]map[string]int{}
	for _, c := range pl.Cells {
		if c.Count <= 0 {
			return fmt.Errorf("plan %s: cell %s: count %d", pl.ID, c.Key, c.Count)
		}
		if !p.Allows(c.Values) {
			return fmt.Errorf("plan %s: cell %s breaks the profile's constraints", pl.ID, c.Key)
		}
		if pl.Fit != nil {
			for _, fc := range pl.Fit.Constraints {
				if !fc.Allows(c.Values) {
					return fmt.Errorf("plan %s: cell %s breaks the repositories' constraint %s", pl.ID, c.Key, fc)
				}
			}
		}
		total += c.Count
		for dim, v := range c.Values {
			if counts[dim] == nil {
				counts[dim] = map[string]int{}
			}
			counts[dim][v] += c.Count
		}
	}
	if total != pl.N {
		return fmt.Errorf("plan %s: cells sum to %d, want n=%d", pl.ID, total, pl.N)
	}
	for _, dim := range vocab.Dimensions() {
		target := p.Target(dim)
		if pl.Fit != nil {
			target = pl.Fit.Targets[dim]
		}
		for v, share := range target {
			q := pl.Quotas[dim][v]
			if counts[dim][v] != q {
				return fmt.Errorf("plan %s: %s=%s: %d dialogues, quota %d", pl.ID, dim, v, counts[dim][v], q)
			}
			if pl.Tuning == nil && math.Abs(float64(q)-share*float64(pl.N)) >= 1 {
				return fmt.Errorf("plan %s: %s=%s: quota %d is not within one unit of %.3f", pl.ID, dim, v, q, share*float64(pl.N))
			}
		}
	}
	return nil
}

// ReadPlan reads a plan.json.
func ReadPlan(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	var pl Plan
	if err := json.Unmarshal(data, &pl); err != nil {
		return nil, fmt.Errorf("read plan %s: %w", path, err)
	}
	if pl.Version != PlanVersion {
		return nil, fmt.Errorf("read plan %s: version %d, want %d", path, pl.Version, PlanVersion)
	}
	return &pl, nil
}

// WritePlan writes the plan as indented JSON, atomically.
func WritePlan(path string, pl *Plan) error {
	data, err := json.MarshalIndent(pl, "", "  ")
	if err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	return runfiles.WriteAtomic(path, append(data, '\n'))
}

// ConfigValues reads a chat config's profile cell: one value per dimension
// ("" where the config does not say), an older spelling of a value read as
// the value ("optimise" as optimize).
func ConfigValues(c dialog.ChatConfig) map[string]string {
	raw := map[string]string{
		vocab.DimIntent:      c.Intent,
		vocab.DimInstruction: c.Instruction,
		vocab.DimTrigger:     c.Trigger,
		vocab.DimCursor:      c.CursorBehaviour,
		vocab.DimReference:   c.Reference,
		vocab.DimLanguage:    c.Language,
		vocab.DimLocale:      c.Locale,
		vocab.DimTurns:       strconv.Itoa(c.TotalTurns()),
		vocab.DimDifficulty:  c.Difficulty,
		vocab.DimQueryStyle:  c.QueryStyle,
	}
	out := make(map[string]string, len(raw))
	for dim, v := range raw {
		if c := vocab.Canonical(dim, v); c != "" {
			v = c
		}
		out[dim] = v
	}
	return out
}
