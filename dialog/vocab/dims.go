package vocab

import (
	"slices"
	"strconv"

	"dialogfarm/dialog"
)

// Dimension names, as written in a profile's `dimensions:` mapping.
const (
	DimIntent      = "intent"
	DimInstruction = "instruction"
	DimTrigger     = "trigger"
	DimCursor      = "cursor"
	DimReference   = "reference"
	DimLanguage    = "language"
	DimLocale      = "locale"
	DimTurns       = "turns"
	DimDifficulty  = "difficulty"
	DimQueryStyle  = "query_style"
)

// Intents.
const (
	IntentExplain  = "explain"
	IntentGenerate = "generate"
	IntentFix      = "fix"
	IntentTests    = "tests"
	IntentDocs     = "docs"
	IntentOptimize = "optimize"
	IntentRefactor = "refactor"
	IntentQuestion = "question" // a general programming question
)

// Cursor behaviours.
const (
	CursorIdle           = "idle"            // cursor outside any symbol, nothing selected
	CursorInsideFunction = "inside_function" // cursor on a line of a function body
	CursorWholeFunction  = "whole_function"  // a whole function selected, exactly
	CursorPartialBlock   = "partial_block"   // a few statements of a body selected
	CursorSingleLine     = "single_line"     // one line of code selected
	CursorWholeFile      = "whole_file"      // the whole file selected
)

// Reference regions: what the query is about.
const (
	RefNone              = "none"
	RefSelection         = "selection"
	RefEnclosingFunction = "enclosing_function"
	RefCurrentFile       = "current_file"
	RefOpenFiles         = "open_files"
)

// Difficulties.
const (
	DifficultyEasy   = "easy"
	DifficultyMedium = "medium"
	DifficultyHard   = "hard"
)

// Query styles: length, and whether code is pasted into the query.
const (
	StyleTerse       = "terse"
	StyleNormal      = "normal"
	StyleVerbose     = "verbose"
	StyleTerseCode   = "terse_code"
	StyleNormalCode  = "normal_code"
	StyleVerboseCode = "verbose_code"
)

// MaxTurns is the largest value of the turns dimension.
const MaxTurns = 10

// Dimensions returns the ten dimension names in canonical order. Plans,
// cell keys and reports list dimensions in this order.
func Dimensions() []string {
	return []string{DimIntent, DimInstruction, DimTrigger, DimCursor, DimReference,
		DimLanguage, DimLocale, DimTurns, DimDifficulty, DimQueryStyle}
}

// DimIndex returns the position of dim in Dimensions, or -1.
func DimIndex(dim string) int { return slices.Index(Dimensions(), dim) }

// Values returns the values a dimension accepts, in canonical order, or nil
// for an unknown dimension. Turns are the numbers "1" to "10" (the number of
// queries in the dialogue, the first included).
func Values(dim string) []string {
	switch dim {
	case DimIntent:
		return []string{IntentExplain, IntentGenerate, IntentFix, IntentTests, IntentDocs,
			IntentOptimize, IntentRefactor, IntentQuestion}
	case DimInstruction:
		return slices.Clone(dialog.Instructions)
	case DimTrigger:
		return slices.Clone(dialog.Triggers)
	case DimCursor:
		return []string{CursorIdle, CursorInsideFunction, CursorWholeFunction, CursorPartialBlock,
			CursorSingleLine, CursorWholeFile}
	case DimReference:
		return []string{RefNone, RefSelection, RefEnclosingFunction, RefCurrentFile, RefOpenFiles}
	case DimLanguage:
		return []string{"go", "python", "javascript", "typescript", "java"}
	case DimLocale:
		return []string{"en", "zh", "ja", "ko", "ru", "es", "de", "fr"}
	case DimTurns:
		out := make([]string, MaxTurns)
		for i := range out {
			out[i] = strconv.Itoa(i + 1)
		}
		return out
	case DimDifficulty:
		return []string{DifficultyEasy, DifficultyMedium, DifficultyHard}
	case DimQueryStyle:
		return []string{StyleTerse, StyleNormal, StyleVerbose, StyleTerseCode, StyleNormalCode, StyleVerboseCode}
	}
	return nil
}

// Known reports whether value is a canonical value of dim.
func Known(dim, value string) bool { return slices.Contains(Values(dim), value) }
