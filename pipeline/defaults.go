package pipeline

import "dialogfarm/sft"

// DefaultOptions are the arguments of today's `run` that the default
// pipeline holds as params.
type DefaultOptions struct {
	Profile string
	N       int
	// Seed, when set, overrides the profile's seed.
	Seed   *int64
	Repos  []string
	Export sft.Options
}

// DefaultSpec is today's run as a pipeline:
//
//	profile → plan → configs → drive → export
//	                       └──────────┴→ report
//	                                 └──────→ dataset
//
// Node ids are the operators' names, so it writes the run folder's usual
// files and RunSpec on it produces what Run produces.
func DefaultSpec(o DefaultOptions) *Spec {
	plan := map[string]any{"n": o.N}
	if o.Seed != nil {
		plan["seed"] = *o.Seed
	}
	repos := make([]any, len(o.Repos))
	for i, r := range o.Repos {
		repos[i] = r
	}
	s := &Spec{APIVersion: APIVersion, Kind: Kind, Name: "default", Nodes: []Node{
		{ID: "profile", Op: "profile", Params: map[string]any{"name": o.Profile}},
		{ID: "plan", Op: "plan", Params: plan, Inputs: map[string]string{"profile": "profile"}},
		{ID: "configs", Op: "configs", Params: map[string]any{"repos": repos}, Inputs: map[string]string{"plan": "plan"}},
		{ID: "drive", Op: "drive", Inputs: map[string]string{"configs": "configs"}},
		{ID: "export", Op: "export", Params: map[string]any{"format": o.Export.Format, "min_score": o.Export.MinScore,
			"meta": o.Export.Meta, "allow_offline": o.Export.AllowOffline}, Inputs: map[string]string{"dialogues": "drive"}},
		{ID: "report", Op: "report", Params: map[string]any{"min_score": o.Export.MinScore, "allow_offline": o.Export.AllowOffline},
			Inputs: map[string]string{"profile": "profile", "configs": "configs", "dialogues": "drive"}},
		{ID: "dataset", Op: "dataset", Params: map[string]any{"format": o.Export.Format, "min_score": o.Export.MinScore,
			"meta": o.Export.Meta, "allow_offline": o.Export.AllowOffline}, Inputs: map[string]string{"dialogues": "drive", "plan": "plan", "profile": "profile"}},
	}}
	_ = s.normalize()
	return s
}
