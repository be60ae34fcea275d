package pipeline

import (
	"dialogfarm/dataset"
	"dialogfarm/sft"
)

// DefaultOptions are the arguments of `run` that the default pipeline
// holds as params.
type DefaultOptions struct {
	Profile string
	N       int
	// Seed, when set, overrides the profile's seed.
	Seed  *int64
	Repos []string
	// PlanFile, when set, is a plan made for the profile (by plan or
	// tune) that the plan node uses instead of planning; N must be its n.
	PlanFile string
	Export   sft.Options
	// Dataset, when its Name is set, gives the dataset node's split,
	// tokens, dedup, name and license (its Export and Seed come from
	// Export and the plan); else the operator's defaults apply.
	Dataset dataset.Options
}

// DefaultSpec is the run as a pipeline, the one place the order of the
// stages is written:
//
//	profile → plan → configs → drive → export
//	                       └──────────┴→ report
//	                                 └──────→ dataset
//
// Node ids are the operators' names, so it writes the run folder's usual
// files.
func DefaultSpec(o DefaultOptions) *Spec {
	repos := make([]any, len(o.Repos))
	for i, r := range o.Repos {
		repos[i] = r
	}
	// The plan fits the repositories the configs node takes files from.
	plan := map[string]any{"n": o.N, "repos": repos}
	if o.Seed != nil {
		plan["seed"] = *o.Seed
	}
	if o.PlanFile != "" {
		plan = map[string]any{"n": o.N, "file": o.PlanFile}
	}
	export := func() map[string]any {
		return map[string]any{"format": o.Export.Format, "min_score": o.Export.MinScore,
			"meta": o.Export.Meta, "allow_offline": o.Export.AllowOffline}
	}
	ds := export()
	if d := o.Dataset; d.Name != "" {
		ds["split"], ds["tokenizer"], ds["max_tokens"] = d.Split, d.Tokenizer, d.MaxTokens
		ds["dedup_exact"], ds["dedup_near"], ds["name"], ds["license"] = d.Dedup.Exact, d.Dedup.Near, d.Name, d.License.ID
		if d.License.Name != "" || d.License.Link != "" {
			ds["license_name"], ds["license_link"] = d.License.Name, d.License.Link
		}
		if d.AllowEmpty {
			ds["allow_empty"] = true
		}
	}
	s := &Spec{APIVersion: APIVersion, Kind: Kind, Name: "default", Nodes: []Node{
		{ID: "profile", Op: "profile", Params: map[string]any{"name": o.Profile}},
		{ID: "plan", Op: "plan", Params: plan, Inputs: map[string]string{"profile": "profile"}},
		{ID: "configs", Op: "configs", Params: map[string]any{"repos": repos}, Inputs: map[string]string{"plan": "plan"}},
		{ID: "drive", Op: "drive", Inputs: map[string]string{"configs": "configs"}},
		{ID: "export", Op: "export", Params: export(), Inputs: map[string]string{"dialogues": "drive"}},
		{ID: "report", Op: "report", Params: map[string]any{"min_score": o.Export.MinScore, "allow_offline": o.Export.AllowOffline},
			Inputs: map[string]string{"profile": "profile", "configs": "configs", "dialogues": "drive"}},
		{ID: "dataset", Op: "dataset", Params: ds, Inputs: map[string]string{"dialogues": "drive", "plan": "plan", "profile": "profile"}},
	}}
	_ = s.normalize()
	return s
}
