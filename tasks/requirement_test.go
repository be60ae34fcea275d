package tasks

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"dialogfarm/internal/llmtest"
	"dialogfarm/pool"
)

// TestRequirementThroughGateway writes a step's requirement with a model
// behind the gateway (pool.Member against the fake server): the prompt
// carries the template and the test's source, the answer is the document,
// and a second build reads the cache instead of calling the model.
func TestRequirementThroughGateway(t *testing.T) {
	g := traceGoFixture(t)
	srv := llmtest.New(t, llmtest.Fixed("# Step\n\nDescribe must return \"area N\" for a shape of area N."))
	cfg := pool.DefaultMemberConfig()
	cfg.Name, cfg.BaseURL, cfg.Model, cfg.Stream = "requirements", srv.URL, "writer-1", false
	m, err := pool.NewMember(cfg, pool.DefaultPolicy(), nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	p := MakePlan(g)
	out := t.TempDir()
	for run := 0; run < 2; run++ {
		b, err := BuildTasks(context.Background(), g, p, out, BuildOptions{Model: m, Log: zaptest.NewLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		if by := b.Tasks[3].RequirementBy; by != "model:writer-1" {
			t.Fatalf("run %d: requirement written by %q", run, by)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != len(p.Steps) {
		t.Fatalf("the model was called %d times for %d steps over two builds; the second should hit the cache", len(reqs), len(p.Steps))
	}
	var prompt string
	for _, r := range reqs {
		if u := r.LastUser(); strings.Contains(u, "TestDescribe") {
			prompt = u
		}
	}
	for _, want := range []string{"func Describe(s Shape) string", `if got := shapes.Describe(shapes.Square{S: 3}); got != "area 9"`} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
}
