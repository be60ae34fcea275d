package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"dialogfarm/dashboard"
)

// events streams every commit ("pipeline": {pipeline, revision, author})
// and every run change ("run": {id}) as server-sent events.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	changes, unsub := s.store.Subscribe()
	defer unsub()
	runs, unsubRuns := s.runs.Subscribe()
	defer unsubRuns()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": connected\n\n")
	flusher.Flush()
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	send := func(event string, v any) bool {
		data, _ := json.Marshal(v)
		_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
		flusher.Flush()
		return err == nil
	}
	for {
		var alive bool
		select {
		case <-r.Context().Done():
			return
		case c := <-changes:
			alive = send("pipeline", c)
		case id := <-runs:
			alive = send("run", map[string]string{"id": id})
		case <-heartbeat.C:
			_, err := fmt.Fprint(w, ": ping\n\n")
			flusher.Flush()
			alive = err == nil
		}
		if !alive {
			return
		}
	}
}

var pageFuncs = map[string]any{}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	repos := "."
	if len(s.opt.Roots) > 0 {
		repos = s.opt.Roots[0]
	}
	s.render(w, "index.tmpl", map[string]any{"Pipelines": s.store.List(), "Runs": s.runs.List(), "Roots": s.opt.Roots, "Repos": repos})
}

func (s *Server) editor(w http.ResponseWriter, r *http.Request) {
	s.render(w, "editor.tmpl", map[string]any{"Name": r.PathValue("name")})
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	panel, err := s.panel(r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	info, _ := s.runs.Get(r.PathValue("id"))
	s.render(w, "run.tmpl", map[string]any{"ID": r.PathValue("id"), "Info": info, "Panel": template.HTML(panel)}) // rendered by html/template
}

// dashboardCSS is the dashboard panel's style sheet (the static
// dashboard.html has it inline; the UI's pages allow no inline style).
func (s *Server) dashboardCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	_ = dashboard.Template(func(string) string { return "" }).ExecuteTemplate(w, "css", nil)
}

func (s *Server) runPanel(w http.ResponseWriter, r *http.Request) {
	panel, err := s.panel(r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(panel))
}

// panel renders a run's dashboard panel, links pointing at its files.
func (s *Server) panel(id string) (string, error) {
	info, err := s.runs.Get(id)
	if err != nil {
		return "", err
	}
	d, err := s.dashboardData(info)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	t := dashboard.Template(func(rel string) string { return "/runs/" + id + "/files/" + rel })
	if err := t.ExecuteTemplate(&b, "panel", d); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (s *Server) render(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = b.WriteTo(w)
}
