// Package profiles defines the ten-dimension behaviour profile that drives
// what dialogfarm simulates: for each dimension (intent, instruction type,
// trigger, cursor behaviour, reference region, programming language, locale,
// dialogue turns, difficulty, query style) a weighted list of values, plus
// constraints between dimensions and a seed.
//
// A profile is written in YAML (see default.yaml, documented line by line):
//
//	name: default
//	seed: 42
//	dimensions:
//	  intent: {explain: 0.22, fix: 0.18, tests: 0.10, ...}
//	  ...
//	constraints:
//	  - when: {intent: tests}
//	    require: {cursor: [inside_function, whole_function, partial_block]}
//	  - when: {cursor: whole_file}
//	    exclude: {reference: none}
//
// Load and Parse validate a profile and return every problem found, each a
// *dialog.FieldError naming the file, line and field (unknown values, negative or
// all-zero weights, constraints that leave no valid combination, weights the
// constraints make unreachable).
//
// Besides the constraints a profile writes, a few structural constraints
// always apply because the reference plugin cannot do otherwise (a plugin
// command is never sent from the chat panel, only the plugin's commands can
// be sent as commands, a selection reference needs a selection, ...); see
// Structural. Weights need not sum to one: each dimension is normalised.
package profiles
