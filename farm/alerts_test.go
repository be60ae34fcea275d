package farm

import (
	"bufio"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"gopkg.in/yaml.v3"
)

// alertsDir holds the alerting rules an operator loads into Prometheus,
// with promtool's unit tests of them.
var alertsDir = filepath.Join("..", "deploy", "prometheus")

// The alerting rules are valid and each one fires on the series that
// should raise it and not on those beside it (promtool's unit tests, with
// the texts each alert renders).
func TestAlertRules(t *testing.T) {
	promtool, err := filepath.Abs(filepath.Join("..", "tools", "promtool", "promtool"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(promtool); err != nil {
		t.Fatalf("promtool is not installed (%v): run `make setup`", err)
	}
	for _, args := range [][]string{
		{"check", "rules", "dialogfarm-alerts.yml"},
		{"check", "config", "scrape.yml"},
		{"test", "rules", "dialogfarm-alerts.test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = alertsDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// servedSeries is what a farm and a worker serve: per metric, per label,
// the values seen.
type servedSeries map[string]map[string]map[string]bool

// add reads metrics in the Prometheus text format.
func (s servedSeries) add(text string) {
	line := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$`)
	label := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if s[m[1]] == nil {
			s[m[1]] = map[string]map[string]bool{}
		}
		for _, l := range label.FindAllStringSubmatch(m[2], -1) {
			if s[m[1]][l[1]] == nil {
				s[m[1]][l[1]] = map[string]bool{}
			}
			s[m[1]][l[1]][l[2]] = true
		}
	}
}

// The rules name only metrics, labels and label values dialogfarm
// serves: those of a farm with a run and a worker that drove it (farm
// serve's), and those of the worker itself and of a run's collector.
// A metric renamed, or a state given another name, fails here.
func TestAlertRulesNameWhatTheFarmServes(t *testing.T) {
	served := farmServes(t)
	data, err := os.ReadFile(filepath.Join(alertsDir, "dialogfarm-alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert, Expr, For string
				Labels           map[string]string
				Annotations      map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(data, &rules); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, rule := range g.Rules {
			n++
			if !slices.Contains([]string{"critical", "warning", "info"}, rule.Labels["severity"]) || rule.Annotations["summary"] == "" || rule.Annotations["description"] == "" {
				t.Errorf("alert %s: want a severity of critical, warning or info, a summary and a description", rule.Alert)
			}
			served.check(t, "alert "+rule.Alert, rule.Expr)
		}
	}
	if n == 0 {
		t.Fatal("no alerting rule read")
	}
}

// farmServes is what dialogfarm serves: the metrics of a farm with a run
// collecting, a run's late result, a worker that drove the first, a shared rate limit booked and a call in flight
// under a farm_max_concurrency (farm serve's), and those of a worker and
// a run's collector (a histogram's as the series Prometheus stores).
func farmServes(t *testing.T) servedSeries {
	t.Helper()
	served := servedSeries{"up": {"job": {}, "instance": {}}}
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := r.q.Enqueue(ctx, "run1", configs(2), 3, nil); err != nil {
		t.Fatal(err)
	}
	// Its collector holds its outcomes on the farm until it has a third,
	// never enqueued; a result of a run with no collector came late.
	go r.q.Collect(ctx, CollectConfig{Run: "run1", Want: append(ids(configs(2)), "never"), Records: newMemRecords()}, zaptest.NewLogger(t)) //nolint:errcheck // ends with the test
	if _, err := r.q.js.Publish(ctx, resultSubject("late1", "cfg-x", "UA"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	stop := r.runWorker(t, WorkerConfig{ID: "w1", Slots: 1}, okDriver, zaptest.NewLogger(t))
	defer stop()
	l := NewLimits(zaptest.NewLogger(t))
	l.Bind(context.Background(), r.q)
	if _, err := l.Limiter(LimitSpec{Key: "rpm-x", Model: "m1", Unit: "calls", PerMinute: 60, Burst: 1}).book(context.Background(), l.bucket(), 1); err != nil {
		t.Fatal(err)
	}
	release, err := l.Slots(SlotSpec{Key: "conc-x", Model: "m1", Max: 2}).Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		text := string(scrapeFarmMetrics(t, r.q.js))
		if strings.Contains(text, "dialogfarm_farm_worker_dialogues_total{") && strings.Contains(text, "dialogfarm_farm_run_outcomes_waiting{") &&
			strings.Contains(text, "dialogfarm_farm_rate_limit_wait_seconds{") && strings.Contains(text, "dialogfarm_farm_model_calls_in_flight{") &&
			strings.Contains(text, "dialogfarm_farm_run_outcomes_late{") {
			served.add(text)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the farm's metrics never showed a worker, a run collecting and one late, a rate limit and calls in flight:\n%s", text)
		}
	}
	m := NewMetrics("w1")
	m.observe(okDialogue(configs(1)[0]))
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			labels := map[string]map[string]bool{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = map[string]bool{l.GetValue(): true}
			}
			served[f.GetName()] = labels
			if mt.GetHistogram() != nil {
				served[f.GetName()+"_sum"], served[f.GetName()+"_count"] = labels, labels
				bucket := maps.Clone(labels)
				bucket["le"] = map[string]bool{}
				served[f.GetName()+"_bucket"] = bucket
			}
		}
	}
	return served
}

// check checks that expr (of where: an alert, a dashboard's panel) names
// only metrics, labels and label values that are served, and names one at
// least.
func (s servedSeries) check(t *testing.T, where, expr string) {
	t.Helper()
	metric := regexp.MustCompile(`\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?`)
	matcher := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)\s*"([^"]*)"`)
	grouping := regexp.MustCompile(`\b(?:by|on|without|ignoring)\s*\(([^)]*)\)`)
	var named []string
	for _, sel := range metric.FindAllStringSubmatch(expr, -1) {
		name := sel[1]
		if !strings.HasPrefix(name, "dialogfarm_") && name != "up" {
			continue // a function, an operator's keyword, a label name
		}
		named = append(named, name)
		labels, ok := s[name]
		if !ok {
			t.Errorf("%s names %s, which dialogfarm does not serve", where, name)
			continue
		}
		for _, mm := range matcher.FindAllStringSubmatch(sel[2], -1) {
			values, ok := labels[mm[1]]
			if !ok {
				t.Errorf("%s: %s has no label %s", where, name, mm[1])
				continue
			}
			if name == "up" || mm[2] == "!=" || mm[2] == "!~" {
				continue
			}
			for _, v := range strings.Split(mm[3], "|") {
				if !values[v] {
					t.Errorf("%s: %s's %s is never %q (served: %v)", where, name, mm[1], v, slices.Sorted(maps.Keys(values)))
				}
			}
		}
	}
	for _, grp := range grouping.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(grp[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !slices.ContainsFunc(named, func(name string) bool { return s[name][l] != nil }) {
				t.Errorf("%s groups by %s, a label none of %v has", where, l, named)
			}
		}
	}
	if len(named) == 0 {
		t.Errorf("%s names no metric: %s", where, expr)
	}
}
