package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"dialogfarm/internal/runfiles"
)

// Manifest is a run folder's run.json. Its first part is what makes the
// folder: the arguments that decide its plan and configs, which every
// later run of the folder must repeat. The rest are the export settings of
// the latest run; the commands that read a run folder (report, export,
// judge) take them as their defaults, so `report RUN` counts kept turns as
// the run did. A run.json written before those fields existed reads with
// MinScore nil and AllowOffline false.
type Manifest struct {
	Profile     string   `json:"profile"`
	ProfileHash string   `json:"profile_hash"`
	N           int      `json:"n"`
	Seed        int64    `json:"seed"`
	Repos       []string `json:"repos"`
	// Plan is the sha256 of the plan file the run was given (run --plan),
	// "" when it planned itself.
	Plan string `json:"plan_sha256,omitempty"`

	Format       string   `json:"format,omitempty"`
	Meta         string   `json:"meta,omitempty"`
	MinScore     *float64 `json:"min_score,omitempty"`
	AllowOffline bool     `json:"allow_offline"`
}

// ReadManifest reads dir's run.json; ok is false when there is none (a
// folder made by drive, or by run --pipeline).
func ReadManifest(dir string) (m Manifest, ok bool, err error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, false, fmt.Errorf("%s: %w", path, err)
	}
	return m, true, nil
}

// ErrOtherRun means the run folder was made with other arguments.
var ErrOtherRun = errors.New("the run folder belongs to a run with other arguments")

// checkManifest writes the manifest into a new run folder, or checks that
// an existing folder was made with the same arguments and records the
// export settings of this run.
func checkManifest(path string, m Manifest) error {
	old, ok, err := ReadManifest(filepath.Dir(path))
	if err != nil {
		return err
	}
	if ok {
		differs := func(field string, was, now any) error {
			return fmt.Errorf("%s: field %s was %v, now %v: %w (use a new --out)", path, field, was, now, ErrOtherRun)
		}
		switch {
		case old.ProfileHash != m.ProfileHash:
			return differs("profile", old.Profile, m.Profile+" (other content)")
		case old.N != m.N:
			return differs("n", old.N, m.N)
		case old.Seed != m.Seed:
			return differs("seed", old.Seed, m.Seed)
		case old.Plan != m.Plan:
			return differs("plan_sha256", old.Plan, m.Plan)
		case !slices.Equal(old.Repos, m.Repos):
			return differs("repos", strings.Join(old.Repos, ", "), strings.Join(m.Repos, ", "))
		case reflect.DeepEqual(old, m):
			return nil
		}
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	return runfiles.WriteAtomic(path, append(data, '\n'))
}
