package vocab

import (
	"strings"

	"dialogfarm/dialog"
)

// aliases maps, per dimension, the other spellings read to the canonical
// value (keys after normalize).
var aliases = map[string]map[string]string{
	DimIntent: {
		"explanation": IntentExplain, "explain_code": IntentExplain,
		"generation": IntentGenerate, "write": IntentGenerate, "implement": IntentGenerate, "codegen": IntentGenerate,
		"repair": IntentFix, "fix_repair": IntentFix, "debug": IntentFix, "bugfix": IntentFix, "bug_fix": IntentFix,
		"test": IntentTests, "write_tests": IntentTests, "unit_tests": IntentTests, "unittest": IntentTests,
		"testing": IntentTests,
		"doc":     IntentDocs, "comments": IntentDocs, "comment": IntentDocs, "add_docs": IntentDocs,
		"add_comments": IntentDocs, "documentation": IntentDocs, "document": IntentDocs,
		"optimise": IntentOptimize, "optimisation": IntentOptimize, "optimization": IntentOptimize,
		"performance": IntentOptimize,
		"refactoring": IntentRefactor,
		"general":     IntentQuestion, "general_question": IntentQuestion, "chat": IntentQuestion, "other": IntentQuestion,
	},
	DimInstruction: {
		"free": dialog.InstructionFreeText, "freetext": dialog.InstructionFreeText,
		"slash": dialog.InstructionSlash, "slashcommand": dialog.InstructionSlash,
		"plugin_command": dialog.InstructionCommand,
	},
	DimTrigger: {
		"chat": dialog.TriggerPanel, "sidebar": dialog.TriggerPanel, "side_panel": dialog.TriggerPanel,
		"chat_panel": dialog.TriggerPanel, "view": dialog.TriggerPanel, "activity_bar": dialog.TriggerPanel,
		"webview":         dialog.TriggerPanel,
		"command_palette": dialog.TriggerPalette, "commandpalette": dialog.TriggerPalette,
		"shortcut": dialog.TriggerKeybinding, "hotkey": dialog.TriggerKeybinding, "keyboard": dialog.TriggerKeybinding,
		"keybind":     dialog.TriggerKeybinding,
		"contextmenu": dialog.TriggerContextMenu, "right_click": dialog.TriggerContextMenu,
		"editor_context": dialog.TriggerContextMenu, "menu": dialog.TriggerContextMenu,
	},
	DimCursor: {
		"inside_symbol": CursorInsideFunction, "in_function": CursorInsideFunction,
		"function_selected": CursorWholeFunction, "block": CursorPartialBlock, "partial": CursorPartialBlock,
		"line": CursorSingleLine, "file": CursorWholeFile,
	},
	DimReference: {
		"function": RefEnclosingFunction, "enclosing": RefEnclosingFunction, "file": RefCurrentFile,
		"current": RefCurrentFile, "files": RefOpenFiles, "several_files": RefOpenFiles,
	},
	DimLocale: {"cn": "zh", "jp": "ja", "kr": "ko"},
}

// languageNames maps code fence tags, file extensions and editor language
// ids to one name per language (wider than the language dimension: the
// judge compares answers' fence tags in any language).
var languageNames = map[string]string{
	"golang": "go", "py": "python", "python3": "python", "py3": "python", "pyi": "python",
	"js": "javascript", "node": "javascript", "jsx": "javascript", "javascriptreact": "javascript",
	"mjs": "javascript", "cjs": "javascript",
	"ts": "typescript", "tsx": "typescript", "typescriptreact": "typescript", "mts": "typescript", "cts": "typescript",
	"c++": "cpp", "cc": "cpp", "cxx": "cpp", "hpp": "cpp", "h": "c",
	"cs": "csharp", "c#": "csharp", "rs": "rust", "rb": "ruby", "kt": "kotlin", "kts": "kotlin",
	"sh": "shell", "bash": "shell", "zsh": "shell", "shellscript": "shell", "console": "shell",
	"shell-session": "shell", "powershell": "shell", "ps1": "shell", "bat": "shell", "cmd": "shell",
	"yml": "yaml", "md": "markdown", "plaintext": "text", "txt": "text", "plain": "text",
	"patch": "diff", "output": "text", "log": "text",
}

// LanguageName is the one name of a language given by a fence tag, a file
// extension without its dot or an editor language id ("golang", "py",
// "typescriptreact"): lower-cased, with aliases resolved.
func LanguageName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if a, ok := languageNames[s]; ok {
		return a
	}
	return s
}

// normalize lower-cases s, drops a leading slash and spells separators
// as '_'.
func normalize(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSpace(strings.TrimPrefix(s, "/"))
	return strings.NewReplacer("-", "_", " ", "_").Replace(s)
}

// Canonical returns dim's value that s spells ("optimise" → "optimize",
// "general" → "question", "golang" → "go", "zh-CN" → "zh", "/doc" →
// "docs", "command-palette" → "palette"), or "" when s is none of dim's
// values.
func Canonical(dim, s string) string {
	switch dim {
	case DimLanguage:
		s = LanguageName(s)
	case DimLocale:
		s, _, _ = strings.Cut(normalize(s), "_")
	default:
		s = normalize(s)
	}
	if Known(dim, s) {
		return s
	}
	if a, ok := aliases[dim][s]; ok {
		return a
	}
	return ""
}

// Intent is Canonical(DimIntent, s).
func Intent(s string) string { return Canonical(DimIntent, s) }
