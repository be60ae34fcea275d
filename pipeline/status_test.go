package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	write(AttemptsFile, `{"config_id":"b"}`+"\n"+`{"config_id":"b"}`+"\n")
	st, err := ReadRunStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 6 || st.OK != 2 || st.Failed != 1 || st.Dead != 1 || st.Retried != 2 {
		t.Fatalf("status %+v", st)
	}
	// 4 records between 10:00:00 and 10:01:50: 2.18 per minute, 2 left.
	if st.PerMinute < 2.1 || st.PerMinute > 2.2 || st.ETA < 50*time.Second || st.ETA > 60*time.Second {
		t.Errorf("rate %.2f/min, ETA %s", st.PerMinute, st.ETA)
	}
	text := st.Text()
	for _, want := range []string{"4 of 6 configs recorded: 2 ok, 1 failed, 1 dead-lettered; 2 failed attempts retried",
		"failures by class: dead_letter 1, turn1_answer 1\n", "records per simulator: farm-2-77/s1 1, s1 1, s2 1\n"} {
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
