package farm

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// dashboardFile is the Grafana dashboard an operator imports.
var dashboardFile = filepath.Join("..", "deploy", "grafana", "dialogfarm-farm.json")

// The dashboard's panels each query the data source its variable picks,
// with valid PromQL (promtool checks each query as a recording rule) that
// names only what dialogfarm serves; each panel has an id of its own and
// a place on the grid.
func TestDashboard(t *testing.T) {
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID        string `json:"uid"`
		Templating struct {
			List []struct{ Name, Type, Query string }
		}
		Panels []struct {
			ID         int
			Type       string
			Title      string
			Datasource struct{ Type, UID string }
			GridPos    struct{ H, W, X, Y int } `json:"gridPos"`
			Targets    []struct {
				Expr       string
				Datasource struct{ Type, UID string }
			}
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if len(dash.Templating.List) != 1 || dash.Templating.List[0].Name != "datasource" || dash.Templating.List[0].Type != "datasource" || dash.Templating.List[0].Query != "prometheus" {
		t.Errorf("templating %+v, want one variable, datasource, of Prometheus data sources", dash.Templating.List)
	}
	served := farmServes(t)
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	ids := map[int]bool{}
	queries := 0
	for _, p := range dash.Panels {
		where := fmt.Sprintf("panel %q", p.Title)
		if ids[p.ID] || p.ID == 0 {
			t.Errorf("%s: id %d is not its own", where, p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("%s: grid position %+v off the 24 columns", where, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s queries nothing", where)
		}
		ds := []struct{ Type, UID string }{p.Datasource}
		for _, tg := range p.Targets {
			ds = append(ds, tg.Datasource)
		}
		for _, q := range ds {
			if q.Type != "prometheus" || q.UID != "${datasource}" {
				t.Errorf("%s: data source %+v, want the variable's", where, q)
			}
		}
		for _, tg := range p.Targets {
			served.check(t, where, tg.Expr)
			queries++
			// Grafana's interval variable, as Prometheus would get it.
			expr := strings.ReplaceAll(tg.Expr, "$__rate_interval", "5m")
			if strings.Contains(expr, "$") {
				t.Errorf("%s: a variable promtool cannot check: %s", where, tg.Expr)
			}
			q, _ := json.Marshal(expr)
			fmt.Fprintf(&rules, "      - record: dashboard:query_%d\n        expr: %s\n", queries, q)
		}
	}
	if queries == 0 {
		t.Fatal("no query read")
	}
	file := filepath.Join(t.TempDir(), "queries.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	promtool, err := filepath.Abs(filepath.Join("..", "tools", "promtool", "promtool"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's queries: %v\n%s", err, out)
	}
}
