package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/profiles"
)

// profileServer serves the profile editor, behind the token, saving into
// a new folder.
func profileServer(t *testing.T) (*guarded, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "profiles")
	return newGuarded(t, Options{ProfilesDir: dir}), dir
}

// postJSON posts body with the token and decodes the answer into out.
func postJSON(t *testing.T, url string, body any, out any) int {
	t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// TestProfileEditorAPI: a weight edit is previewed (the plan of N, the
// changed dimension's JSD, the others' 0), an edit that leaves a
// dimension all zero is previewed with the profile loader's error and
// cannot be saved, a valid edit saves as a profile file that loads with
// the new weights, and a built-in name or a bad name is refused.
func TestProfileEditorAPI(t *testing.T) {
	ts, dir := profileServer(t)
	edit := map[string]any{"base": "default", "n": 40, "weights": map[string]map[string]float64{"intent": {"explain": 0.5}}}
	var pv planPreview
	if code := postJSON(t, ts.url+"/api/profiles/preview", edit, &pv); code != 200 || !pv.Valid || pv.N != 40 {
		t.Fatalf("preview: %d %+v", code, pv)
	}
	for _, d := range pv.Dimensions {
		sum := 0
		for _, v := range d.Values {
			sum += v.QuotaB
		}
		if sum != 40 || (d.Dim == "intent") != (d.JSD > 0) {
			t.Errorf("%s: quotas %d, JSD %.4f", d.Dim, sum, d.JSD)
		}
	}
	zero := map[string]float64{}
	for _, w := range mustDefault(t).Dimensions["difficulty"] {
		zero[w.Value] = 0
	}
	bad := map[string]any{"base": "default", "n": 40, "weights": map[string]map[string]float64{"difficulty": zero}}
	var bpv planPreview
	if postJSON(t, ts.url+"/api/profiles/preview", bad, &bpv); bpv.Valid || len(bpv.Errors) == 0 || !strings.Contains(strings.Join(bpv.Errors, " "), "all weights are zero") {
		t.Errorf("all-zero difficulty previewed as %+v", bpv)
	}
	var res map[string]string
	if code := postJSON(t, ts.url+"/api/profiles/zero", bad, &res); code != 400 {
		t.Errorf("an invalid profile saved: %d %v", code, res)
	}
	if code := postJSON(t, ts.url+"/api/profiles/more-explain", edit, &res); code != 200 {
		t.Fatalf("save: %d %v", code, res)
	}
	p, err := profiles.Load(filepath.Join(dir, "more-explain.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Target("intent")["explain"]; got < 0.38 || p.Name != "more-explain" {
		t.Errorf("saved profile %s: explain share %.3f", p.Name, got)
	}
	for _, name := range []string{"default", "Bad%20Name"} {
		if code := postJSON(t, ts.url+"/api/profiles/"+name, edit, &res); code != 400 {
			t.Errorf("save as %s: %d %v", name, code, res)
		}
	}
	var view profileView
	req, _ := http.NewRequest("GET", ts.url+"/api/profiles/more-explain", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&view); err != nil || !view.Saved || len(view.Dimensions) != 10 {
		t.Errorf("saved profile view %+v, err %v", view, err)
	}
}

func mustDefault(t *testing.T) *profiles.Profile {
	t.Helper()
	p, err := profiles.Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestUIProfileEditor: in the browser, the profile page shows the ten
// dimensions' weights; typing a weight updates the previewed plan's
// quota and marks the row; saving under a new name writes the file.
func TestUIProfileEditor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "profiles")
	s := newSiteOpts(t, siteOptions{profiles: dir})
	p := s.page("/profiles/default")
	waitJS(t, p, `document.querySelectorAll('.dim').length === 10 && document.querySelector('#row-intent-explain .quota').textContent === '22'`)
	if _, err := p.Eval(`() => { const i = document.querySelector('input[data-dim=intent][data-value=explain]'); i.value = '0.6'; i.dispatchEvent(new Event('input')); }`); err != nil {
		t.Fatal(err)
	}
	waitJS(t, p, `document.querySelector('#row-intent-explain').classList.contains('changed') && parseInt(document.querySelector('#row-intent-explain .quota').textContent) > 40`)
	if shot := os.Getenv("DIALOGFARM_PROFILE_SHOT"); shot != "" {
		data, err := p.Screenshot(true, nil)
		if err == nil {
			_ = os.WriteFile(shot, data, 0o644)
		}
	}
	if _, err := p.Eval(`() => { document.getElementById('save-name').value = 'explainer'; document.getElementById('save').click(); }`); err != nil {
		t.Fatal(err)
	}
	waitJS(t, p, `document.getElementById('status').textContent.startsWith('saved')`)
	if _, err := profiles.Load(filepath.Join(dir, "explainer.yaml")); err != nil {
		t.Fatal(err)
	}
}
