package profiles

import (
	"fmt"
	"slices"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

// Weight is one value of a dimension and its (unnormalised) weight.
type Weight struct {
	Value  string  `json:"value"`
	Weight float64 `json:"weight"`
	// Line is the line in the source file, 0 if the profile was built in code.
	Line int `json:"-"`
}

// Constraint restricts combinations: a combination matching every
// dimension listed in When must take, for each dimension in Require, one of
// the listed values, and for each dimension in Exclude, none of them.
type Constraint struct {
	Name    string              `json:"name,omitempty"`
	When    map[string][]string `json:"when"`
	Require map[string][]string `json:"require,omitempty"`
	Exclude map[string][]string `json:"exclude,omitempty"`
	// Structural marks the built-in constraints of Structural.
	Structural bool `json:"structural,omitempty"`
	Line       int  `json:"-"`
}

// Allows reports whether the constraint accepts the combination (dimension
// name to value). vocab.Dimensions missing from combo never match When and never
// violate Require or Exclude.
func (c Constraint) Allows(combo map[string]string) bool {
	for dim, vals := range c.When {
		v, ok := combo[dim]
		if !ok || !slices.Contains(vals, v) {
			return true
		}
	}
	for dim, vals := range c.Require {
		if v, ok := combo[dim]; ok && !slices.Contains(vals, v) {
			return false
		}
	}
	for dim, vals := range c.Exclude {
		if v, ok := combo[dim]; ok && slices.Contains(vals, v) {
			return false
		}
	}
	return true
}

// String describes the constraint in one line.
func (c Constraint) String() string {
	s := fmt.Sprintf("when %v", c.When)
	if len(c.Require) > 0 {
		s += fmt.Sprintf(" require %v", c.Require)
	}
	if len(c.Exclude) > 0 {
		s += fmt.Sprintf(" exclude %v", c.Exclude)
	}
	if c.Name != "" {
		s = c.Name + ": " + s
	}
	return s
}

// SlashCommands maps the intents the reference plugin has a slash command for
// to that command.
func SlashCommands() map[string]string {
	return map[string]string{vocab.IntentExplain: "/explain", vocab.IntentFix: "/fix", vocab.IntentTests: "/tests",
		vocab.IntentDocs: "/doc", vocab.IntentOptimize: "/optimize"}
}

// PluginCommands maps the intents the reference plugin has an editor command
// for (Explain Selection, Fix Selection, Write Tests, Add Docs) to the slash
// form that names the command in a ChatConfig's first query.
func PluginCommands() map[string]string {
	return map[string]string{vocab.IntentExplain: "/explain", vocab.IntentFix: "/fix", vocab.IntentTests: "/tests",
		vocab.IntentDocs: "/doc"}
}

// Structural returns the constraints every profile obeys, whatever it
// writes, because the reference plugin cannot produce other combinations:
//
//   - a plugin command is run from the palette, a keybinding or the context
//     menu, never from the chat panel;
//   - only Explain/Fix/Write Tests/Add Docs exist as commands, and only
//     /explain, /fix, /tests, /doc, /optimize as slash commands;
//   - a command sends a fixed template, so its query style is terse;
//   - a selection reference needs a selection; an enclosing-function
//     reference needs the cursor in, or a selection of, a function.
func Structural() []Constraint {
	keys := func(m map[string]string) []string {
		out := make([]string, 0, len(m))
		for _, intent := range vocab.Values(vocab.DimIntent) {
			if _, ok := m[intent]; ok {
				out = append(out, intent)
			}
		}
		return out
	}
	return []Constraint{
		{Name: "command-not-from-panel", Structural: true,
			When:    map[string][]string{vocab.DimInstruction: {dialog.InstructionCommand}},
			Exclude: map[string][]string{vocab.DimTrigger: {dialog.TriggerPanel}}},
		{Name: "command-intents", Structural: true,
			When:    map[string][]string{vocab.DimInstruction: {dialog.InstructionCommand}},
			Require: map[string][]string{vocab.DimIntent: keys(PluginCommands()), vocab.DimQueryStyle: {vocab.StyleTerse}}},
		{Name: "slash-intents", Structural: true,
			When:    map[string][]string{vocab.DimInstruction: {dialog.InstructionSlash}},
			Require: map[string][]string{vocab.DimIntent: keys(SlashCommands())}},
		{Name: "selection-needs-selection", Structural: true,
			When: map[string][]string{vocab.DimReference: {vocab.RefSelection}},
			Require: map[string][]string{vocab.DimCursor: {vocab.CursorWholeFunction, vocab.CursorPartialBlock,
				vocab.CursorSingleLine, vocab.CursorWholeFile}}},
		{Name: "function-needs-function", Structural: true,
			When:    map[string][]string{vocab.DimReference: {vocab.RefEnclosingFunction}},
			Require: map[string][]string{vocab.DimCursor: {vocab.CursorInsideFunction, vocab.CursorWholeFunction}}},
	}
}

// Profile is a validated behaviour profile.
type Profile struct {
	Name        string
	Description string
	Seed        int64
	// Dimensions holds, for each of the ten dimensions, its weighted values
	// in the order the profile lists them.
	Dimensions map[string][]Weight
	// Constraints are the profile's own constraints; Structural ones are
	// applied on top (see All).
	Constraints []Constraint
	// Source is the file the profile came from ("" if built in code).
	Source string
}

// All returns the structural constraints followed by the profile's own.
func (p *Profile) All() []Constraint {
	return append(Structural(), p.Constraints...)
}

// Allows reports whether a full or partial combination satisfies every
// constraint, structural ones included.
func (p *Profile) Allows(combo map[string]string) bool {
	for _, c := range p.All() {
		if !c.Allows(combo) {
			return false
		}
	}
	return true
}

// Target returns the normalised weights of dim's values (value → share);
// values with zero weight are included with share 0.
func (p *Profile) Target(dim string) map[string]float64 {
	ws := p.Dimensions[dim]
	total := 0.0
	for _, w := range ws {
		total += w.Weight
	}
	out := make(map[string]float64, len(ws))
	for _, w := range ws {
		if total > 0 {
			out[w.Value] = w.Weight / total
		} else {
			out[w.Value] = 0
		}
	}
	return out
}
