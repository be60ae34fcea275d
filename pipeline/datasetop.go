package pipeline

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"dialogfarm/dataset"
	"dialogfarm/judge"
	"dialogfarm/profiles"
	"dialogfarm/sft"
)

// TypeDataset is a dataset folder (package dataset): it ends a pipeline.
const TypeDataset PortType = "dataset"

// datasetOperator writes the dataset folder from judged dialogues.
func datasetOperator() *Operator {
	def, exp := dataset.DefaultOptions(), sft.DefaultOptions()
	return &Operator{
		Name: "dataset", Category: "stage",
		Doc: "Writes the dataset folder: train/validation JSONL split by dialogue after the quality gates (roles, empty turns, tokens, duplicates), a dataset card, LLaMA-Factory dataset_info.json and stats.json.",
		Inputs: []Port{{Name: "dialogues", Type: TypeDialogues}, {Name: "plan", Type: TypePlan, Optional: true},
			{Name: "profile", Type: TypeProfile, Optional: true}},
		Outputs: []Port{{Name: "dataset", Type: TypeDataset}},
		Params: object(nil, map[string]*jsonschema.Schema{
			"format":        str("SFT format", exp.Format, sft.FormatOpenAI, sft.FormatShareGPT),
			"min_score":     number("lowest final score a kept turn may have", 0, 5, exp.MinScore),
			"meta":          str("metadata placement", exp.Meta, sft.MetaInline, sft.MetaSidecar, sft.MetaNone),
			"allow_offline": boolean("export the offline stand-in's placeholder answers", false),
			"split":         number("share of dialogues in train.jsonl", 0.01, 1, def.Split),
			"seed":          integer("split seed (default: the plan's seed)", 0, 1<<53, nil),
			"tokenizer":     str("tiktoken encoding tokens are counted with", def.Tokenizer, dataset.Encodings...),
			"max_tokens":    integer("drop records with more tokens (0: no limit)", 0, 1<<31, def.MaxTokens),
			"dedup_exact":   boolean("drop exact duplicates", def.Dedup.Exact),
			"dedup_near":    number("drop near duplicates at or above this Jaccard similarity (0: off)", 0, 1, def.Dedup.Near),
			"name":          str("dataset name (card title, LLaMA-Factory entries NAME_train, NAME_validation)", def.Name),
			"license":       str("license of the dataset card: a Hugging Face Hub license id (an SPDX id such as mit), unknown, or other with license_name and license_link", def.License.ID),
			"license_name":  str("name of the license when license is other", ""),
			"license_link":  str("link to the license's text when license is other", ""),
			"allow_empty":   boolean("write a folder that says it is empty when no record is kept, instead of failing", false),
		}),
		NeedsFields: map[string][]string{"dialogues": {"score"}},
		fields: func(map[string][]string, map[string]any) map[string][]string {
			return map[string][]string{"dataset": nil}
		},
		run: runDataset,
	}
}

func runDataset(ctx context.Context, x *nodeRun) error {
	var p struct {
		Format       string  `json:"format"`
		MinScore     float64 `json:"min_score"`
		Meta         string  `json:"meta"`
		AllowOffline bool    `json:"allow_offline"`
		Split        float64 `json:"split"`
		Seed         *int64  `json:"seed"`
		Tokenizer    string  `json:"tokenizer"`
		MaxTokens    int     `json:"max_tokens"`
		DedupExact   bool    `json:"dedup_exact"`
		DedupNear    float64 `json:"dedup_near"`
		Name         string  `json:"name"`
		License      string  `json:"license"`
		LicenseName  string  `json:"license_name"`
		LicenseLink  string  `json:"license_link"`
		AllowEmpty   bool    `json:"allow_empty"`
	}
	if err := x.decode(&p); err != nil {
		return err
	}
	cfg, err := x.stageConfig()
	if err != nil {
		return err
	}
	cfg.Export = sft.Options{Format: p.Format, MinScore: p.MinScore, Meta: p.Meta, AllowOffline: p.AllowOffline}
	if x.env.Drive.Redact != nil {
		cfg.Export.Secrets = x.env.Drive.Redact.Detector()
	}
	opt := dataset.DefaultOptions()
	opt.Split, opt.Tokenizer, opt.MaxTokens = p.Split, p.Tokenizer, p.MaxTokens
	opt.Dedup.Exact, opt.Dedup.Near, opt.Name, opt.AllowEmpty = p.DedupExact, p.DedupNear, p.Name, p.AllowEmpty
	opt.License = dataset.License{ID: p.License, Name: p.LicenseName, Link: p.LicenseLink}
	opt.Run.RubricVersion = judge.RubricVersion(x.env.Rubrics)
	switch plan, ok := x.in["plan"]; {
	case p.Seed != nil:
		opt.Seed = *p.Seed
	case ok:
		pl, err := profiles.ReadPlan(plan.Path)
		if err != nil {
			return err
		}
		opt.Seed = pl.Seed
	}
	cfg.Dataset = opt
	x.result, err = writeDataset(ctx, cfg, x.in["dialogues"].Path, x.out["dataset"].Path)
	return err
}
