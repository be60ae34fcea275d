package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dialogfarm/dashboard"
	"dialogfarm/sft"
)

func TestReadRunStatus(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(ConfigsFile, "{}\n{}\n{}\n{}\n{}\n{}\n")
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Format(time.RFC3339)
	t1 := time.Date(2026, 12, 1, 10, 1, 0, 0, time.UTC).Format(time.RFC3339)
	write(DialoguesFile, `{"config_id":"a","status":"ok","session":"s1","started_at":"`+t0+`","seconds":10}`+"\n"+
		`{"config_id":"b","status":"failed","failed_step":"turn1_answer","session":"s2","started_at":"`+t0+`","seconds":20}`+"\n"+
		`{"config_id":"c","status":"failed","failed_step":"dead_letter","started_at":"`+t1+`","seconds":0}`+"\n"+
		`{"config_id":"d","status":"ok","session":"s1","worker":"farm-2-77","started_at":"`+t1+`","seconds":50}`+"\n"+
		`{"config_id":"e","sta`) // torn by a kill
	write(AttemptsFile, `{"config_id":"b"}`+"\n"+`{"config_id":"b"}`+"\n"+`{"config_id":"d","failed_step":"worker_recipe"}`+"\n")
	st, err := ReadRunStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 6 || st.OK != 2 || st.Failed != 1 || st.Dead != 1 || st.Retried != 2 || st.Refused != 1 {
		t.Fatalf("status %+v", st)
	}
	// 4 records between 10:00:00 and 10:01:50: 2.18 per minute, 2 left.
	if st.PerMinute < 2.1 || st.PerMinute > 2.2 || st.ETA < 50*time.Second || st.ETA > 60*time.Second {
		t.Errorf("rate %.2f/min, ETA %s", st.PerMinute, st.ETA)
	}
	text := st.Text()
	for _, want := range []string{"4 of 6 configs recorded: 2 ok, 1 failed, 1 dead-lettered; 2 failed attempts retried",
		"failures by class: dead_letter 1, turn1_answer 1\n",
		"refused: 1 jobs by workers whose recipe differs from the run's (failed_step worker_recipe in attempts.jsonl)\n", "records per simulator: farm-2-77/s1 1, s1 1, s2 1\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("status text lacks %q:\n%s", want, text)
		}
	}
	// A bad line that is not the last is an error naming it.
	write(DialoguesFile, "{bad\n"+`{"config_id":"a","status":"ok"}`+"\n")
	if _, err := ReadRunStatus(dir); err == nil || !strings.Contains(err.Error(), "dialogues.jsonl:1") {
		t.Errorf("bad line: %v", err)
	}
	// A folder that is missing, or holds no run, is named as such.
	if _, err := ReadRunStatus(filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := ReadRunStatus(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not a run folder") {
		t.Errorf("empty folder: %v", err)
	}
}

// TestDashboardRateIsStatusRate: dashboard.html shows the dialogues per
// minute and ETA that status prints (the demo's said 0.0 where status
// said 29.0): both come from dashboard.Pace.
func TestDashboardRateIsStatusRate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(ConfigsFile, `{"id":"a"}`+"\n"+`{"id":"b"}`+"\n"+`{"id":"c"}`+"\n"+`{"id":"d"}`+"\n")
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var lines []string
	for i, id := range []string{"a", "b", "c"} {
		lines = append(lines, `{"config_id":"`+id+`","status":"ok","started_at":"`+t0.Add(time.Duration(i)*2*time.Second).Format(time.RFC3339)+`","seconds":2}`)
	}
	write(DialoguesFile, strings.Join(lines, "\n")+"\n")
	st, err := ReadRunStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.PerMinute != 30 { // 3 records in 6 s
		t.Fatalf("status rate %.1f", st.PerMinute)
	}
	spec := DefaultSpec(DefaultOptions{Profile: "default", N: 4, Repos: []string{"."}, Export: sft.DefaultOptions()})
	nodes := []NodeState{{ID: "configs", Op: "configs", Status: NodeDone, Outputs: map[string]Value{"configs": {Type: TypeConfigs, Path: filepath.Join(dir, ConfigsFile)}}},
		{ID: "drive", Op: "drive", Status: NodeDone, Outputs: map[string]Value{"dialogues": {Type: TypeDialogues, Path: filepath.Join(dir, DialoguesFile)}}}}
	if err := WriteDashboard(spec, nodes, dir, RunDone); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, dashboard.File))
	if err != nil {
		t.Fatal(err)
	}
	if want := "<b>30.0</b> dialogues/min<br>ETA 2s"; !strings.Contains(string(html), want) {
		t.Fatalf("dashboard.html lacks %q:\n%s", want, html)
	}
}
