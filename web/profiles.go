package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"dialogfarm/analyst"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/runfiles"
	"dialogfarm/profiles"
)

// The profile editor: the ten dimensions of a profile as editable
// weights, the plan they imply previewed (quotas per value for N
// dialogues, JSD from the profile it started from, every validation
// error) before the edit is saved as a new profile file in
// Options.ProfilesDir.

// profileName is what a saved profile may be called.
var profileName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// profileView is GET /api/profiles/{name}.
type profileView struct {
	Name        string           `json:"name"`
	Source      string           `json:"source"`
	Description string           `json:"description"`
	Seed        int64            `json:"seed"`
	Dimensions  []profileDimView `json:"dimensions"`
	Constraints []string         `json:"constraints"`
	Saved       bool             `json:"saved"`
}

type profileDimView struct {
	Dim    string            `json:"dim"`
	Values []profiles.Weight `json:"values"`
}

// profileEdit is the body of the preview and save requests: the profile
// edited from (Base), the new weights per dimension and value, and N.
type profileEdit struct {
	Base    string                        `json:"base"`
	Weights map[string]map[string]float64 `json:"weights"`
	N       int                           `json:"n"`
}

// planPreview is what the edit implies.
type planPreview struct {
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors,omitempty"`
	PlanID string   `json:"plan_id,omitempty"`
	N      int      `json:"n"`
	Cells  int      `json:"cells"`
	// Dimensions per value: the share before and after, the quota of the
	// plan of N; JSD per dimension between before and after.
	Dimensions []analyst.DimDiff `json:"dimensions"`
}

func (s *Server) profileRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /profiles", func(w http.ResponseWriter, r *http.Request) {
		s.render(w, "profiles.tmpl", map[string]any{"Builtin": profiles.BuiltinNames(), "Saved": s.savedProfiles(), "CanSave": s.opt.ProfilesDir != ""})
	})
	mux.HandleFunc("GET /profiles/{name}", func(w http.ResponseWriter, r *http.Request) {
		s.render(w, "profile.tmpl", map[string]any{"Name": r.PathValue("name"), "CanSave": s.opt.ProfilesDir != ""})
	})
	mux.HandleFunc("GET /api/profiles/{name}", func(w http.ResponseWriter, r *http.Request) {
		p, saved, err := s.loadProfile(r.PathValue("name"))
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, viewOf(p, saved))
	})
	mux.HandleFunc("POST /api/profiles/preview", func(w http.ResponseWriter, r *http.Request) {
		var e profileEdit
		if err := readJSON(r, &e); err != nil {
			writeErr(w, err)
			return
		}
		pv, err := s.preview(e)
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, pv)
	})
	mux.HandleFunc("POST /api/profiles/{name}", func(w http.ResponseWriter, r *http.Request) {
		var e profileEdit
		if err := readJSON(r, &e); err != nil {
			writeErr(w, err)
			return
		}
		path, err := s.saveProfile(r.PathValue("name"), e)
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"saved": path})
	})
}

// savedProfiles lists the profiles saved in ProfilesDir.
func (s *Server) savedProfiles() []string {
	if s.opt.ProfilesDir == "" {
		return nil
	}
	entries, err := os.ReadDir(s.opt.ProfilesDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && profileName.MatchString(name) {
			out = append(out, name)
		}
	}
	return out
}

// loadProfile loads a saved profile, else a built-in one.
func (s *Server) loadProfile(name string) (*profiles.Profile, bool, error) {
	if !profileName.MatchString(name) {
		return nil, false, fmt.Errorf("profile name %q: want lower-case letters, digits, - and _", name)
	}
	if s.opt.ProfilesDir != "" {
		path := filepath.Join(s.opt.ProfilesDir, name+".yaml")
		if _, err := os.Stat(path); err == nil {
			p, err := profiles.Load(path)
			return p, true, err
		}
	}
	p, err := profiles.Builtin(name)
	return p, false, err
}

func viewOf(p *profiles.Profile, saved bool) profileView {
	v := profileView{Name: p.Name, Source: p.Source, Description: p.Description, Seed: p.Seed, Saved: saved}
	for _, dim := range vocab.Dimensions() {
		v.Dimensions = append(v.Dimensions, profileDimView{Dim: dim, Values: p.Dimensions[dim]})
	}
	for _, c := range p.Constraints {
		v.Constraints = append(v.Constraints, c.String())
	}
	return v
}

// edited applies the edit's weights to its base profile and validates
// the result as a profile file would be (the same errors Load gives).
func (s *Server) edited(e profileEdit) (base, p *profiles.Profile, errs []string, err error) {
	base, _, err = s.loadProfile(e.Base)
	if err != nil {
		return nil, nil, nil, err
	}
	q := *base
	q.Dimensions = map[string][]profiles.Weight{}
	for _, dim := range vocab.Dimensions() {
		for _, w := range base.Dimensions[dim] {
			if x, ok := e.Weights[dim][w.Value]; ok {
				if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
					return nil, nil, nil, fmt.Errorf("weight of %s=%s is %v: want a finite number at least 0", dim, w.Value, x)
				}
				w.Weight = x
			}
			q.Dimensions[dim] = append(q.Dimensions[dim], profiles.Weight{Value: w.Value, Weight: w.Weight})
		}
		for v := range e.Weights[dim] {
			if !slices.ContainsFunc(base.Dimensions[dim], func(w profiles.Weight) bool { return w.Value == v }) {
				return nil, nil, nil, fmt.Errorf("%s has no value %q in profile %s", dim, v, base.Name)
			}
		}
	}
	for dim := range e.Weights {
		if vocab.DimIndex(dim) < 0 {
			return nil, nil, nil, fmt.Errorf("no dimension %q", dim)
		}
	}
	// Validate as the file would read: Marshal, then Parse, so the
	// preview shows the errors Load would give.
	parsed, perr := profiles.Parse(q.Name+".yaml", profiles.Marshal(&q, nil, nil))
	if perr != nil {
		for _, line := range strings.Split(perr.Error(), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				errs = append(errs, line)
			}
		}
		return base, &q, errs, nil
	}
	return base, parsed, nil, nil
}

// preview plans the edited profile for N dialogues and compares it with
// its base.
func (s *Server) preview(e profileEdit) (*planPreview, error) {
	if e.N <= 0 || e.N > 100_000 {
		return nil, fmt.Errorf("n %d: want 1 to 100000 for a preview", e.N)
	}
	base, p, errs, err := s.edited(e)
	if err != nil {
		return nil, err
	}
	pv := &planPreview{N: e.N, Errors: errs}
	var pl *profiles.Plan
	plan := func(x *profiles.Profile) (*profiles.Plan, error) {
		return analyst.MakePlan(x, analyst.PlanConfig{N: e.N, Seed: x.Seed})
	}
	if len(errs) == 0 {
		if pl, err = plan(p); err != nil {
			pv.Errors = append(pv.Errors, err.Error())
		}
	}
	d := analyst.DiffProfiles(base, p, e.N, func(x *profiles.Profile) (*profiles.Plan, error) {
		if x == p {
			if pl == nil {
				return nil, errors.New("no plan")
			}
			return pl, nil
		}
		return plan(x)
	})
	pv.Dimensions = d.Dimensions
	if pl != nil {
		pv.Valid, pv.PlanID, pv.Cells = true, pl.ID, len(pl.Cells)
	}
	return pv, nil
}

// saveProfile writes the edited profile as NAME.yaml in ProfilesDir,
// refusing an invalid one.
func (s *Server) saveProfile(name string, e profileEdit) (string, error) {
	if s.opt.ProfilesDir == "" {
		return "", errors.New("this server saves no profiles (no store folder)")
	}
	if !profileName.MatchString(name) {
		return "", fmt.Errorf("profile name %q: want lower-case letters, digits, - and _", name)
	}
	if slices.Contains(profiles.BuiltinNames(), name) {
		return "", fmt.Errorf("%q is a built-in profile: save the edit under another name", name)
	}
	base, p, errs, err := s.edited(e)
	if err != nil {
		return "", err
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("the edited profile is not valid: %s", strings.Join(errs, "; "))
	}
	p.Name = name
	header := []string{name + ".yaml — edited in dialogfarm serve from profile " + base.Name, "run it: dialogfarm run --profile PATH ..."}
	if err := runfiles.MkdirAll(s.opt.ProfilesDir); err != nil {
		return "", fmt.Errorf("create %s: %w", s.opt.ProfilesDir, err)
	}
	path := filepath.Join(s.opt.ProfilesDir, name+".yaml")
	if err := runfiles.WriteAtomic(path, profiles.Marshal(p, header, nil)); err != nil {
		return "", err
	}
	return path, nil
}
