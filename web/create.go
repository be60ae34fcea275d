package web

import (
	"errors"
	"net/http"
	"strings"

	"dialogfarm/pipeline"
	"dialogfarm/sft"
)

// createIn is POST /api/pipelines/{name}/create: a new pipeline from the
// default one (from "default", with its repositories, n and profile) or
// from a pipeline file's text (yaml).
type createIn struct {
	From    string   `json:"from"`
	Repos   []string `json:"repos"`
	N       int      `json:"n"`
	Profile string   `json:"profile"`
	YAML    string   `json:"yaml"`
	File    string   `json:"file"` // the imported file's name, for errors
}

// yamlIn is POST /api/pipelines/{name}/yaml: the YAML panel's text,
// committed as one revision on the revision it was edited from.
type yamlIn struct {
	BaseRevision int    `json:"base_revision"`
	YAML         string `json:"yaml"`
	Message      string `json:"message"`
}

// ErrBadRequest is a request that cannot be acted on as written.
var ErrBadRequest = errors.New("bad request")

func (s *Server) createAPI(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/pipelines/{name}/create", func(w http.ResponseWriter, r *http.Request) {
		var in createIn
		if err := readJSON(r, &in); err != nil {
			writeErr(w, err)
			return
		}
		spec, msg, err := in.spec()
		if err != nil {
			writeErr(w, err)
			return
		}
		// base_revision 0: an existing pipeline of that name is a conflict,
		// never overwritten.
		s.commitSpec(w, r, pipeline.Batch{BaseRevision: 0, Message: msg, Mutations: []pipeline.Mutation{{Op: pipeline.MutReplace, Spec: spec}}})
	})
	mux.HandleFunc("POST /api/pipelines/{name}/yaml", func(w http.ResponseWriter, r *http.Request) {
		var in yamlIn
		if err := readJSON(r, &in); err != nil {
			writeErr(w, err)
			return
		}
		spec, err := pipeline.ParseSpec("the YAML", []byte(in.YAML))
		if err != nil {
			writeErr(w, err)
			return
		}
		msg := in.Message
		if msg == "" {
			msg = "edit YAML"
		}
		s.commitSpec(w, r, pipeline.Batch{BaseRevision: in.BaseRevision, Message: msg, Mutations: []pipeline.Mutation{{Op: pipeline.MutReplace, Spec: spec}}})
	})
}

// spec builds the pipeline a create request asks for.
func (in createIn) spec() (*pipeline.Spec, string, error) {
	switch {
	case in.From == "default" && in.YAML == "":
		var repos []string
		for _, r := range in.Repos {
			if r = strings.TrimSpace(r); r != "" {
				repos = append(repos, r)
			}
		}
		if len(repos) == 0 || in.N <= 0 {
			return nil, "", errors.Join(ErrBadRequest, errors.New("the default pipeline needs repositories and a positive n"))
		}
		if in.Profile == "" {
			in.Profile = "default"
		}
		return pipeline.DefaultSpec(pipeline.DefaultOptions{Profile: in.Profile, N: in.N, Repos: repos, Export: sft.DefaultOptions()}),
			"new from the default pipeline", nil
	case in.From == "" && in.YAML != "":
		file := in.File
		if file == "" {
			file = "the imported YAML"
		}
		spec, err := pipeline.ParseSpec(file, []byte(in.YAML))
		if err != nil {
			return nil, "", err
		}
		return spec, "import " + file, nil
	}
	return nil, "", errors.Join(ErrBadRequest, errors.New(`give from: "default" (with repos and n) or yaml`))
}

// commitSpec applies a batch on the named pipeline as the UI's.
func (s *Server) commitSpec(w http.ResponseWriter, r *http.Request, b pipeline.Batch) {
	b.Author = "ui"
	res, err := s.store.Apply(r.PathValue("name"), b)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
