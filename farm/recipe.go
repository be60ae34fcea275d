package farm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"go.uber.org/zap"
)

// Recipe is what a run's records depend on beside each config: the
// plugins that drive its configs and how their answers are made, judged
// and followed up. A run puts its recipe in every job, and a worker whose
// own recipe differs refuses the job (see Worker), so workers set up
// differently (another plugin version, another pool, an offline
// stand-in) never mix their records into one run. What machines may set
// differently without changing a record (base URLs, key variables,
// concurrency, timeouts, retries) is not part of it.
type Recipe struct {
	// Plugins are the run's adapters, the default one first: each one's
	// name, its extension's id and version, and digests of the adapter
	// and of the editor settings.
	Plugins []string `json:"plugins"`
	// Answers says where answers come from: the responder, and the pool
	// members' models and sampling.
	Answers string `json:"answers"`
	// Judge is the judge's model (or rules only) and a digest of its
	// rules, rubrics and thresholds.
	Judge string `json:"judge,omitempty"`
	// FollowUps is the model that writes follow-up queries, if any.
	FollowUps string `json:"follow_ups,omitempty"`
}

// Differences describes each part of the worker's recipe w that differs
// from the run's recipe run; none when they match.
func (w Recipe) Differences(run Recipe) []string {
	var out []string
	part := func(name string, mine, theirs any, equal bool) {
		if !equal {
			out = append(out, fmt.Sprintf("%s: the run's %v, this worker's %v", name, theirs, mine))
		}
	}
	part("plugins", w.Plugins, run.Plugins, slices.Equal(w.Plugins, run.Plugins))
	part("answers", quoted(w.Answers), quoted(run.Answers), w.Answers == run.Answers)
	part("judge", quoted(w.Judge), quoted(run.Judge), w.Judge == run.Judge)
	part("follow-ups", quoted(w.FollowUps), quoted(run.FollowUps), w.FollowUps == run.FollowUps)
	return out
}

func quoted(s string) string {
	if s == "" {
		return "(none)"
	}
	return fmt.Sprintf("%q", s)
}

// Digest is a short hash of v's JSON, for a recipe part too long to say.
func Digest(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "unencodable"
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

// WithRecipe puts the run's recipe in each job.
func WithRecipe(r Recipe) EnqueueOption {
	return func(j *Job) { j.Recipe = &r }
}

// FailedStepRecipe is the failed step of an attempt a worker refused
// because its recipe differs from the run's.
const FailedStepRecipe = "worker_recipe"

// refusals are the jobs of a run that workers refused, as the run's
// collector saw them: the last reason per config, and which workers it
// warned about.
type refusals struct {
	last   map[string]string
	warned map[string]bool
}

func newRefusals() *refusals {
	return &refusals{last: map[string]string{}, warned: map[string]bool{}}
}

// note keeps a's reason, and warns once per worker that it refuses the
// run's jobs.
func (r *refusals) note(a Attempt, log *zap.Logger) {
	r.last[a.Dialogue.ConfigID] = a.Dialogue.Error
	if !r.warned[a.Worker] {
		r.warned[a.Worker] = true
		log.Warn("a worker refuses this run's jobs: its recipe differs from the run's (other workers may take them; a job refused every time is dead-lettered)",
			zap.String("worker", a.Worker), zap.String("error", a.Dialogue.Error))
	}
}
