package editor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeExtension writes an extension's manifest with the given
// configurationDefaults into dir/folder.
func writeExtension(t *testing.T, dir, folder, id string, defaults map[string]any) {
	t.Helper()
	pub, name, _ := strings.Cut(id, ".")
	m := map[string]any{"publisher": pub, "name": name, "version": "1.0.0",
		"contributes": map[string]any{"configurationDefaults": defaults}}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, folder), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, folder, "package.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readSettings starts nothing: it writes an editor's folders for cfg and
// returns the settings.json it got.
func readSettings(t *testing.T, cfg Config) map[string]any {
	t.Helper()
	if _, err := editorDirs(cfg); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(cfg.Dir, "user-data", "User", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// A language's default from an extension outranks a user setting that
// names no language, so the settings repeat theirs for each such
// language: for the built-ins and the installed extensions, not for the
// skipped ones, and never over a language section the config sets.
func TestSettingsHoldForLanguagesWithDefaultsOfTheirOwn(t *testing.T) {
	builtins, installed := t.TempDir(), t.TempDir()
	writeExtension(t, builtins, "javascript", "vscode.javascript", map[string]any{
		"[javascript]": map[string]any{"editor.maxTokenizationLineLength": 2500}})
	writeExtension(t, builtins, "csharp", "vscode.csharp", map[string]any{
		"[csharp]": map[string]any{"editor.maxTokenizationLineLength": 2500}})
	writeExtension(t, builtins, "yaml", "vscode.yaml", map[string]any{
		"[yaml][dockercompose]": map[string]any{"editor.tabSize": 2, "editor.autoIndent": "advanced"},
		"editor.fontSize":       20, // no language: the user's own setting already wins
	})
	writeExtension(t, builtins, "css", "vscode.css-language-features", map[string]any{
		"[css]": map[string]any{"editor.tabSize": 2}})
	writeExtension(t, installed, "team.plugin-1.0.0", "team.plugin", map[string]any{
		"[python]": map[string]any{"editor.tabSize": 2, "editor.folding": true}})
	if err := os.WriteFile(filepath.Join(installed, "extensions.json"), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}

	ownYAML := map[string]any{"editor.wordWrap": "on"}
	s := readSettings(t, Config{Dir: t.TempDir(), Password: "pw", Builtins: builtins, ExtensionsDir: installed,
		SkipBuiltin: []string{"vscode.css-language-features"},
		Settings: map[string]any{"editor.tabSize": 8, "[yaml]": ownYAML,
			"[csharp]": map[string]any{"editor.maxTokenizationLineLength": 20000}}})

	section := func(lang string) map[string]any {
		m, _ := s[lang].(map[string]any)
		return m
	}
	if got := section("[javascript]")["editor.maxTokenizationLineLength"]; got != float64(0) {
		t.Errorf("[javascript] editor.maxTokenizationLineLength = %v, want the user setting 0", got)
	}
	if got := section("[csharp]")["editor.maxTokenizationLineLength"]; got != float64(20000) {
		t.Errorf("[csharp] editor.maxTokenizationLineLength = %v, want the config's own 20000", got)
	}
	for _, lang := range []string{"[yaml]", "[dockercompose]", "[python]"} {
		if got := section(lang)["editor.tabSize"]; got != float64(8) {
			t.Errorf("%s editor.tabSize = %v, want the config's 8", lang, got)
		}
	}
	if len(ownYAML) != 1 {
		t.Errorf("the config's own [yaml] section was written to: %v", ownYAML)
	}
	if got := section("[yaml]")["editor.wordWrap"]; got != "on" {
		t.Errorf("[yaml] editor.wordWrap = %v, want the config's own on", got)
	}
	if _, ok := section("[yaml]")["editor.autoIndent"]; ok {
		t.Errorf("[yaml] sets editor.autoIndent, which no user setting gives: %v", section("[yaml]"))
	}
	if got := section("[python]")["editor.folding"]; got != false {
		t.Errorf("[python] editor.folding = %v, want the default settings' false", got)
	}
	if _, ok := s["[css]"]; ok {
		t.Errorf("the skipped CSS extension's defaults got a section: %v", s["[css]"])
	}
	if got := s["editor.tabSize"]; got != float64(8) {
		t.Errorf("editor.tabSize = %v, want 8", got)
	}
}

// An extension with a manifest that is not JSON stops the start with an
// error naming it; missing folders are not an error.
func TestSettingsBadManifest(t *testing.T) {
	builtins := t.TempDir()
	if err := os.MkdirAll(filepath.Join(builtins, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(builtins, "broken", "package.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := userSettings(Config{Builtins: builtins})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(builtins, "broken")) {
		t.Errorf("error %v, want one naming %s", err, filepath.Join(builtins, "broken"))
	}
	if _, err := userSettings(Config{Builtins: filepath.Join(builtins, "missing"), ExtensionsDir: filepath.Join(builtins, "none")}); err != nil {
		t.Errorf("missing extension folders: %v", err)
	}
}
