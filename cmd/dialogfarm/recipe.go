package main

import (
	"fmt"
	"strings"

	"dialogfarm/driver"
	"dialogfarm/farm"
	"dialogfarm/judge"
	"dialogfarm/pool"
)

// recipe is what this process's records depend on beside each config
// (farm.Recipe): its adapters, each with its plugin's id and version, and
// the editor settings; where answers come from; the judge; and the model
// that writes follow-ups. A run puts it in its jobs and a worker refuses
// those of a run whose recipe is not its own.
func (a *app) recipe(rc driver.RunConfig, versions []string) (farm.Recipe, error) {
	var r farm.Recipe
	settings := farm.Digest(rc.Editor.Settings)
	for i, ad := range rc.Adapters {
		c := *ad // where the plugin is on this machine is not the recipe
		c.Extension.Folder, c.Extension.VSIX = "", ""
		r.Plugins = append(r.Plugins, fmt.Sprintf("%s: %s (adapter %s, editor settings %s)", ad.Name, versions[i], farm.Digest(c), settings))
	}
	rulesOnly := judgeRecipe(nil, judge.DefaultConfig())
	switch name := a.responderName(); name {
	case "pool":
		s, err := a.loadPoolSettings(a.v.GetString("pool-file"))
		if err != nil {
			return r, err
		}
		r.Answers, r.Judge = "pool: "+poolRecipe(s.Pool), judgeRecipe(s.JudgeModel, s.Judge)
		if a.v.GetString("tasks") != "" {
			r.Judge += ", answers run against the tasks' tests"
		}
	case "openai":
		r.Answers, r.Judge = "openai: "+a.v.GetString("model"), rulesOnly
	default:
		r.Answers, r.Judge = name, rulesOnly
	}
	if m := a.v.GetString("query-model"); m != "" {
		r.FollowUps = "model " + m
	}
	return r, nil
}

// poolRecipe names the members' models and what shapes their answers.
func poolRecipe(c pool.Config) string {
	var ms []string
	for _, m := range c.Members {
		s := m.Name + "=" + m.Model
		if m.Temperature != nil {
			s += fmt.Sprintf(" temperature %g", *m.Temperature)
		}
		if m.MaxTokens > 0 {
			s += fmt.Sprintf(" max_tokens %d", m.MaxTokens)
		}
		ms = append(ms, s)
	}
	out := strings.Join(ms, ", ")
	if c.Quorum > 0 {
		out += fmt.Sprintf("; quorum %d", c.Quorum)
	}
	return out
}

// judgeRecipe names the judge's model and digests its rules, rubrics and
// thresholds (not how many calls it makes at once or retries).
func judgeRecipe(model *pool.MemberConfig, c judge.Config) string {
	c.Concurrency, c.MaxRetries = 0, 0
	who := "rules only"
	if model != nil {
		who = "model " + model.Model
	}
	return fmt.Sprintf("%s (config %s)", who, farm.Digest(c))
}
