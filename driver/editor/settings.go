package editor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// DefaultSettings are the user settings that keep code-server's own
// dialogs and panels out of a simulated developer's way, and stop an input
// repository from running code: no automatic or auto-detected tasks (gulp,
// grunt and jake detection runs the repository's build files), no git (a
// repository's .git/config can name commands git runs), no debug or
// auto-attach, no extension recommendations, installs or updates, no PHP
// validator. Workspace trust stays disabled so the plugin runs; see
// docs/security.md, "Locked-down editor and endpoints", for what that leaves open.
func DefaultSettings() map[string]any {
	return map[string]any{
		"task.allowAutomaticTasks":                     "off",
		"task.autoDetect":                              "off",
		"npm.autoDetect":                               "off",
		"gulp.autoDetect":                              "off",
		"grunt.autoDetect":                             "off",
		"jake.autoDetect":                              "off",
		"typescript.tsc.autoDetect":                    "off",
		"typescript.enablePromptUseWorkspaceTsdk":      false,
		"git.autofetch":                                false,
		"git.autoRepositoryDetection":                  false,
		"git.openRepositoryInParentFolders":            "never",
		"git.terminalAuthentication":                   false,
		"github.gitAuthentication":                     false,
		"debug.openDebug":                              "neverOpen",
		"debug.internalConsoleOptions":                 "neverOpen",
		"debug.javascript.autoAttachFilter":            "disabled",
		"extensions.ignoreRecommendations":             true,
		"php.validate.enable":                          false,
		"json.schemaDownload.enable":                   false,
		"remote.autoForwardPorts":                      false,
		"terminal.integrated.hideOnStartup":            "always",
		"terminal.integrated.enablePersistentSessions": false,
		"security.workspace.trust.enabled":             false,
		"workbench.startupEditor":                      "none",
		"workbench.secondarySideBar.defaultVisibility": "hidden",
		"workbench.tips.enabled":                       false,
		"workbench.enableExperiments":                  false,
		"telemetry.telemetryLevel":                     "off",
		"update.mode":                                  "none",
		"extensions.autoUpdate":                        false,
		"extensions.autoCheckUpdates":                  false,
		"chat.commandCenter.enabled":                   false,
		"chat.disableAIFeatures":                       true,
		"editor.detectIndentation":                     false,
		"editor.tabSize":                               4,
		"editor.quickSuggestions":                      map[string]any{"other": false, "comments": false, "strings": false},
		"editor.suggestOnTriggerCharacters":            false,
		"editor.parameterHints.enabled":                false,
		"editor.hover.enabled":                         false,
		"editor.minimap.enabled":                       false,
		"files.hotExit":                                "off",
		"window.restoreWindows":                        "none",
		"git.enabled":                                  false,
		// What a window does while it only waits for the model costs CPU
		// on every simulator: no blinking cursor, animations, smooth
		// scrolling or decorations that repaint, and no language
		// services nobody asks for (the TypeScript server runs
		// syntax-only and installs no typings).
		"editor.cursorBlinking":                      "solid",
		"editor.cursorSmoothCaretAnimation":          "off",
		"workbench.reduceMotion":                     "on",
		"editor.smoothScrolling":                     false,
		"workbench.list.smoothScrolling":             false,
		"editor.codeLens":                            false,
		"editor.semanticHighlighting.enabled":        false,
		"editor.occurrencesHighlight":                "off",
		"editor.selectionHighlight":                  false,
		"editor.bracketPairColorization.enabled":     false,
		"editor.guides.indentation":                  false,
		"editor.stickyScroll.enabled":                false,
		"editor.lightbulb.enabled":                   "off",
		"editor.inlayHints.enabled":                  "off",
		"breadcrumbs.enabled":                        false,
		"typescript.tsserver.useSyntaxServer":        "always",
		"typescript.disableAutomaticTypeAcquisition": true,
		"typescript.validate.enable":                 false,
		"javascript.validate.enable":                 false,
		"typescript.surveys.enabled":                 false,
		// code-server is a remote to the workbench and has a tunnel
		// provider, so even with remote.autoForwardPorts off every
		// window's extension host looked for ports to forward: at least
		// every 2 s it ran `ls -l /proc/[0-9]*/fd/[0-9]* | grep socket:`
		// in a shell and read every process's cmdline and cwd (the
		// longer, the more processes the machine runs). With the
		// "output" source it looks for nothing (no terminal runs).
		"remote.autoForwardPortsSource": "output",
		// Each of these has the workbench feed an editor web worker
		// (links, colours, Unicode and section-header scans of every
		// opened file; minimap section headers are scanned even with the
		// minimap off) or compute folding ranges and bracket matches no
		// step looks at. The worker stops whenever the last editor
		// closes, as reset does, so each dialogue's open_file started a
		// new one (a Chromium trace: 0.2-0.4 s of the window's main
		// thread to load it, plus its own thread).
		"editor.links":                                false,
		"editor.colorDecorators":                      false,
		"editor.unicodeHighlight.ambiguousCharacters": false,
		"editor.unicodeHighlight.invisibleCharacters": false,
		"editor.unicodeHighlight.nonBasicASCII":       false,
		"editor.wordBasedSuggestions":                 "off",
		"editor.folding":                              false,
		"editor.matchBrackets":                        "never",
		"editor.minimap.showRegionSectionHeaders":     false,
		"editor.minimap.showMarkSectionHeaders":       false,
		// Highlighting runs on the window's main thread: the default
		// background tokenizer is a web worker per window that loads
		// the TextMate grammars and the regex engine's wasm a second
		// time (1 sim x 6 configs: peak Chromium RSS 1012 -> 965 MiB,
		// PSS 988 -> 915 MiB; the files driven are small).
		"editor.experimental.asyncTokenization": false,
		// An editor's scrollbars show when it scrolls (open_file reveals
		// the config's line) and then fade out over 0.8 s, a CSS
		// transition no reduce-motion setting stops: ~50 frames drawn
		// in software per dialogue for a 14 px strip. Always shown, they
		// never fade.
		"editor.scrollbar.vertical":   "visible",
		"editor.scrollbar.horizontal": "visible",
		// The explorer selects and scrolls to every file opened, and
		// reset shows the explorer again each dialogue: its tree then
		// re-rendered with the file revealed in it, which no step looks
		// at. editorbench 1 sim x 12, 2 s model, steady: reset 0.18-0.24
		// -> 0.12-0.14 renderer CPU-s, code-server + Chromium 1.76-1.80
		// -> 1.58-1.64 CPU-s per dialogue.
		"explorer.autoReveal": false,
		// No syntax highlighting (no extension can read its tokens): the
		// workbench tokenized each opened file in the background, a sixth
		// of the CPU per dialogue on 400-1,500-line files (editorbench
		// -repo, 1 x 12, alternated: 2.07/2.13 -> 1.75/1.60 CPU-s). 0, not
		// 1: an empty line is shorter than 1, and tokenizing the first
		// one compiled the language's grammar in every window. The
		// languages whose extensions set their own limit get this one
		// too (overrideLanguageDefaults). An adapter's settings can give
		// 20000.
		"editor.maxTokenizationLineLength": 0,
		// With proxy support each extension host asks the workbench,
		// which asks code-server, for the proxy of every connection a
		// plugin opens, and for the system's CA certificates, all
		// through the shared renderer's main thread. A plugin here talks
		// to the capture endpoint on loopback over plain HTTP: no proxy
		// and no certificate to look up. editorbench -standing, 4 windows
		// (2 alternated pairs, load 0.3-0.6): the renderer 614/619 ->
		// 587/584 MiB RSS.
		"http.proxySupport":       "off",
		"http.systemCertificates": false,
	}
}

// userSettings is the settings.json an editor starts with:
// DefaultSettings, what keeps the skipped built-ins out of the web
// worker, the config's own settings over them, and all of these again for
// the languages whose extensions set defaults of their own.
func userSettings(cfg Config) ([]byte, error) {
	settings := DefaultSettings()
	if kinds := skippedKinds(cfg.SkipBuiltin); kinds != nil {
		settings["remote.extensionKind"] = kinds
	}
	for k, v := range cfg.Settings {
		settings[k] = v
	}
	var extDirs []string
	for _, d := range []string{cfg.Builtins, cfg.ExtensionsDir} {
		if d != "" {
			extDirs = append(extDirs, d)
		}
	}
	if err := overrideLanguageDefaults(settings, extDirs, cfg.SkipBuiltin); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode settings: %w", err)
	}
	return data, nil
}

// languageKey matches a configurationDefaults key that names languages:
// "[javascript]", or "[javascript][typescript]" for several.
var languageKey = regexp.MustCompile(`^(\[[^\[\]]+\])+$`)

// overrideLanguageDefaults gives settings' own values again under each
// language for which an extension in dirs (folders of extensions, such as
// the built-ins and the installed ones) sets a default of its own: in
// VS Code a language's default outranks a user setting that names no
// language. The JavaScript and C# built-ins set
// editor.maxTokenizationLineLength to 2500, so JavaScript files were
// highlighted whatever the user settings said; a first JavaScript file
// then cost its window ~0.3 CPU-s of compiling the grammar's regular
// expressions (a Chromium profile of the step after it opened). Skipped
// extensions, which do not run, are passed over, and a language section
// the settings hold keeps what it sets.
func overrideLanguageDefaults(settings map[string]any, dirs []string, skip []string) error {
	skipped := map[string]bool{}
	for _, id := range skip {
		skipped[strings.ToLower(id)] = true
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("list extensions: %w", err)
		}
		for _, e := range entries {
			m, ok, err := readManifest(filepath.Join(dir, e.Name()))
			if err != nil {
				return err
			}
			if !ok || skipped[strings.ToLower(m.Publisher+"."+m.Name)] {
				continue
			}
			for key, raw := range m.Contributes.ConfigurationDefaults {
				if !languageKey.MatchString(key) {
					continue
				}
				var defaults map[string]any
				if json.Unmarshal(raw, &defaults) != nil {
					continue // not a section of settings: VS Code ignores it too
				}
				for _, lang := range strings.Split(strings.Trim(key, "[]"), "][") {
					overrideLanguage(settings, "["+lang+"]", defaults)
				}
			}
		}
	}
	return nil
}

// overrideLanguage sets, in the section of settings named lang, each
// setting of defaults that settings set without a language and the
// section does not set already. A section from the config is copied
// before it changes: the config's map is not ours to write.
func overrideLanguage(settings map[string]any, lang string, defaults map[string]any) {
	given, ok := settings[lang].(map[string]any)
	if _, set := settings[lang]; set && !ok {
		return // a section of another shape is the user's to keep
	}
	section := maps.Clone(given)
	for name := range defaults {
		v, set := settings[name]
		if _, own := section[name]; !set || own {
			continue
		}
		if section == nil {
			section = map[string]any{}
		}
		section[name] = v
		settings[lang] = section
	}
}
