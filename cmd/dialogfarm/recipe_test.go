package main

import (
	"strings"
	"testing"

	"dialogfarm/farm"
)

// recipeOf is the recipe of the command args names, as it puts it in its
// jobs (run, drive) or checks jobs against (worker).
func recipeOf(t *testing.T, args ...string) farm.Recipe {
	t.Helper()
	a := parsedApp(t, append(args, "--root", "../.."))
	dc, err := a.driveConfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if dc.Farm.Recipe == nil {
		t.Fatalf("%v: no recipe", args)
	}
	return *dc.Farm.Recipe
}

// A worker and a run set up alike have the same recipe; what changes the
// records (the responder, a pool's models, the plugins, the query model)
// changes it, and what is only this machine's (a member's base URL and
// key variable, its concurrency) does not.
func TestRecipeFollowsTheSettings(t *testing.T) {
	pool := func(baseURL, model string, concurrency int) string {
		return writePoolYAML(t, "pool:\n  members:\n    - name: a\n      base_url: "+baseURL+"\n      model: "+model+
			"\n      api_key_env: MY_KEY\n      allow_key_env: true\n      max_concurrency: "+strings.Repeat("1", concurrency)+"\n")
	}
	here := pool("http://127.0.0.1:8000/v1", "model-a", 1)
	there := pool("http://10.0.0.7:9000/v1", "model-a", 2)
	bigger := pool("http://127.0.0.1:8000/v1", "model-b", 1)

	run := recipeOf(t, "run", "--pool", here)
	if w := recipeOf(t, "worker", "--pool", there); len(w.Differences(run)) > 0 {
		t.Errorf("a worker whose pool differs only in routes refuses the run: %v", w.Differences(run))
	}
	if !strings.HasPrefix(run.Answers, "pool: a=model-a") || len(run.Plugins) != 1 || strings.Contains(run.Plugins[0], "unencodable") {
		t.Errorf("the run's recipe %+v", run)
	}
	for _, c := range []struct {
		args []string
		part string
	}{
		{[]string{"worker", "--pool", bigger}, "answers"},
		{[]string{"worker", "--responder", "offline"}, "answers"},
		{[]string{"worker", "--pool", here, "--query-model", "q-1"}, "follow-ups"},
		{[]string{"worker", "--pool", here, "--context-lines", "3"}, "plugins"},
	} {
		d := recipeOf(t, c.args...).Differences(run)
		if len(d) != 1 || !strings.HasPrefix(d[0], c.part+":") {
			t.Errorf("%v against the run: %v, want a difference in %s", c.args, d, c.part)
		}
	}
}
