package dataset

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// RunInfo is what the card says about the run the data came from.
type RunInfo struct {
	// Version is dialogfarm's version (module version, VCS revision, Go
	// version), as the binary's build information records it.
	Version       string `yaml:"version" json:"version"`
	Profile       string `yaml:"profile" json:"profile"`
	ProfileHash   string `yaml:"profile_hash" json:"profile_hash"`
	RubricVersion string `yaml:"judge_rubric_version" json:"judge_rubric_version"`
	// Redactions are the secret-redaction counts of the run, as the run
	// folder's report.json (key "redactions") or redactions.json hold them;
	// nil when the run recorded none.
	Redactions map[string]any `yaml:"redactions,omitempty" json:"redactions,omitempty"`
}

// ReadRunInfo reads what a run folder says about its run: the profile from
// run.json and the redaction counts from report.json ("redactions") or a
// redactions.json in the run folder or one folder down.
// Missing files leave their fields empty; unreadable ones are an error.
func ReadRunInfo(runDir string) (RunInfo, error) {
	var ri RunInfo
	var manifest struct {
		Profile     string `json:"profile"`
		ProfileHash string `json:"profile_hash"`
	}
	if err := readJSONIfExists(filepath.Join(runDir, "run.json"), &manifest); err != nil {
		return ri, err
	}
	ri.Profile, ri.ProfileHash = manifest.Profile, manifest.ProfileHash
	var report struct {
		Redactions map[string]any `json:"redactions"`
	}
	if err := readJSONIfExists(filepath.Join(runDir, "report.json"), &report); err != nil {
		return ri, err
	}
	ri.Redactions = report.Redactions
	// redact.Sanitise writes redactions.json next to the sanitised copies
	// of the repositories: in the run folder or one folder down.
	more, _ := filepath.Glob(filepath.Join(runDir, "*", "redactions.json"))
	for _, path := range append([]string{filepath.Join(runDir, "redactions.json")}, more...) {
		if ri.Redactions != nil {
			break
		}
		if err := readJSONIfExists(path, &ri.Redactions); err != nil {
			return ri, err
		}
		// A run's redactions.json also lists the copies (local paths): the
		// card takes only its counts.
		if total, ok := ri.Redactions["total"].(map[string]any); ok {
			ri.Redactions = total
		}
	}
	return ri, nil
}

func readJSONIfExists(path string, v any) error {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}
