package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"dialogfarm/dashboard"
	"dialogfarm/pipeline"
)

// pipelineView is GET /api/pipelines/{name}.
type pipelineView struct {
	Pipeline string             `json:"pipeline"`
	Revision int                `json:"revision"`
	Spec     *pipeline.Spec     `json:"spec"`
	YAML     string             `json:"yaml"`
	Findings []pipeline.Finding `json:"findings"`
}

func (s *Server) api(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/operators", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.store.Registry().List())
	})
	mux.HandleFunc("GET /api/pipelines", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.store.List())
	})
	mux.HandleFunc("GET /api/pipelines/{name}", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.view(r.PathValue("name"))
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
	mux.HandleFunc("POST /api/pipelines/{name}/apply", func(w http.ResponseWriter, r *http.Request) {
		var b pipeline.Batch
		if err := readJSON(r, &b); err != nil {
			writeErr(w, err)
			return
		}
		b.Author = "ui"
		if a := r.Header.Get("X-Dialogfarm-Author"); a != "" {
			b.Author = "ui:" + a
		}
		res, err := s.store.Apply(r.PathValue("name"), b)
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("GET /api/pipelines/{name}/history", func(w http.ResponseWriter, r *http.Request) {
		h, err := s.store.History(r.PathValue("name"))
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, h)
	})
	mux.HandleFunc("POST /api/pipelines/{name}/revert", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			To           int `json:"to"`
			BaseRevision int `json:"base_revision"`
		}
		if err := readJSON(r, &in); err != nil {
			writeErr(w, err)
			return
		}
		res, err := s.store.Revert(r.PathValue("name"), in.To, in.BaseRevision, "ui")
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("POST /api/pipelines/{name}/run", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			DryRun bool `json:"dry_run"`
			Limit  int  `json:"limit"`
		}
		if err := readJSON(r, &in); err != nil {
			writeErr(w, err)
			return
		}
		name := r.PathValue("name")
		spec, rev, err := s.store.Get(name)
		if err != nil {
			writeErr(w, err)
			return
		}
		info, err := s.runs.Start(name, spec, rev, in.DryRun, in.Limit)
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, info)
	})
	mux.HandleFunc("GET /api/runs", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.runs.List())
	})
	mux.HandleFunc("GET /api/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		info, err := s.runs.Get(r.PathValue("id"))
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, info)
	})
	mux.HandleFunc("POST /api/runs/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		info, err := s.runs.Cancel(r.PathValue("id"))
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, info)
	})
}

func (s *Server) view(name string) (pipelineView, error) {
	spec, rev, err := s.store.Get(name)
	if err != nil {
		return pipelineView{}, err
	}
	data, err := spec.YAML()
	if err != nil {
		return pipelineView{}, err
	}
	fs := s.store.Validate(spec)
	if fs == nil {
		fs = []pipeline.Finding{}
	}
	return pipelineView{Pipeline: name, Revision: rev, Spec: spec, YAML: string(data), Findings: fs}, nil
}

// dashboardData is a run's dashboard: every figure, the rate and ETA
// among them, from its records (dashboard.Pace, as status computes them).
func (s *Server) dashboardData(info pipeline.RunInfo) (*dashboard.Data, error) {
	d, err := dashboard.Build(pipeline.DashboardSources(info.Spec, info.Nodes, info.Out))
	if err != nil {
		return nil, err
	}
	d.Title = info.ID
	d.Progress.Status = info.Status
	return d, nil
}

// readJSON decodes the request body (cut at the guard's limit) into v.
func readJSON(r *http.Request, v any) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	if len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeErr(w http.ResponseWriter, err error) {
	code := http.StatusBadRequest
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		code = http.StatusRequestEntityTooLarge
	case errors.Is(err, pipeline.ErrNoPipeline), errors.Is(err, pipeline.ErrNoRun):
		code = http.StatusNotFound
	case errors.Is(err, pipeline.ErrBusy):
		code = http.StatusConflict
	}
	writeJSON(w, code, map[string]string{"error": err.Error()})
}
