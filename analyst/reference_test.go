package analyst

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/internal/golden"
)

// referenceLogs converts the hand-written reference queries
// (testdata/reference/queries.txt) into the analyst's log format: one
// session per query, its follow-ups as later turns, a file of its
// language, and a selection when the query points at code ("this").
func referenceLogs(tb testing.TB) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "reference", "queries.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	files := map[string][]string{
		"python": {"billing/calc.py", "billing/report.py", "app/models.py"}, "javascript": {"web/cart.js", "web/events.js", "src/ui.js"},
		"typescript": {"web/format.ts", "web/store.ts", "src/api.ts"}, "go": {"textutil/wrap.go", "server/handler.go", "queue/queue.go"},
		"java": {"src/main/java/com/example/Order.java", "src/main/java/com/example/Inventory.java"},
	}
	var buf bytes.Buffer
	session, turn := 0, 0
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		follow := strings.HasPrefix(line, "+")
		parts := strings.SplitN(strings.TrimPrefix(line, "+"), "|", 3)
		if len(parts) != 3 {
			tb.Fatalf("queries.txt:%d: want locale|language|query", i+1)
		}
		lang, query := parts[1], strings.ReplaceAll(parts[2], `\n`, "\n")
		rec := map[string]any{"query": query}
		if follow {
			turn++
		} else {
			session, turn = session+1, 1
			fs := files[lang]
			rec["file"] = fs[session%len(fs)]
			rec["language"] = lang
			rec["trigger"] = "panel"
			if deictic.MatchString(query) && !strings.Contains(query, "```") {
				rec["selection"] = map[string]any{"lines": 2 + session%9}
			}
		}
		rec["session_id"], rec["turn"] = fmt.Sprintf("ref-%03d", session), turn
		line, err := json.Marshal(rec)
		if err != nil {
			tb.Fatal(err)
		}
		buf.Write(append(line, '\n'))
	}
	return buf.Bytes()
}

// TestReferenceLogs: logs.jsonl is queries.txt in the log format (go
// test -update rewrites it), every line reads, and the set holds the
// styles it is meant to: 300+ sessions, terse ones, pasted code, typos,
// eight locales.
func TestReferenceLogs(t *testing.T) {
	path := filepath.Join("testdata", "reference", "logs.jsonl")
	golden.Check(t, path, referenceLogs(t))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, bad, err := ReadLogs(f, Mapping{})
	if err != nil || len(bad) > 0 {
		t.Fatalf("read: %v, bad lines %v", err, bad)
	}
	sessions := GroupSessions(recs)
	styles, locales := map[string]int{}, map[string]int{}
	for _, s := range sessions {
		o := Observe(s)
		styles[o.QueryStyle]++
		locales[o.Locale]++
	}
	t.Logf("%d sessions; styles %v; locales %v", len(sessions), styles, locales)
	if len(sessions) < 300 || styles["terse"] < 100 || styles["terse_code"]+styles["normal_code"]+styles["verbose_code"] < 8 || len(locales) < 8 {
		t.Errorf("%d sessions, styles %v, locales %v", len(sessions), styles, locales)
	}
}
