// Package dialog holds the nouns every dialogfarm stage shares: the chat
// configuration a simulator executes, the dialogue it records, the turns of
// that dialogue with the exact request the plugin sent, the candidates the
// model pool proposed and the judge's verdicts on them.
//
// It has no dependencies beyond the standard library, and no stage-specific
// behaviour: stages import it, it imports no stage.
package dialog

import (
	"encoding/json"
	"time"
)

// Position is a 1-based line and column in a file. Columns count characters
// (a tab is one column), as the editor's "Go to Line" command takes them.
type Position struct {
	Line int `json:"line"`
	Col  int `json:"col"`
}

// Selection is a range from Start to End; End is exclusive in the editor's
// sense (a selection ending at line 12, col 1 covers lines up to 11).
type Selection struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Triggers: how the simulated developer opens the assistant.
const (
	TriggerPanel       = "panel"        // clicks the assistant's icon in the activity bar
	TriggerPalette     = "palette"      // runs an "Ask: ..." command from the command palette (F1)
	TriggerKeybinding  = "keybinding"   // presses the command's keybinding
	TriggerContextMenu = "context_menu" // right-clicks in the editor and picks an "Ask: ..." item
)

// Triggers lists every trigger value a ChatConfig may carry.
var Triggers = []string{TriggerPanel, TriggerPalette, TriggerKeybinding, TriggerContextMenu}

// Instruction types: what the developer sends.
const (
	// InstructionFreeText: the query is typed into the chat input as is.
	InstructionFreeText = "free_text"
	// InstructionSlash: the query starts with a slash command (/explain,
	// /fix, /tests, /doc, /optimize) and is typed into the chat input.
	InstructionSlash = "slash_command"
	// InstructionCommand: the trigger runs one of the plugin's commands
	// (Explain Selection, Fix Selection, Write Tests, Add Docs), which sends
	// the command's template at once. The first turn's query names the
	// command by its slash form ("/explain", "/fix", "/tests", "/doc").
	InstructionCommand = "command"
)

// Instructions lists every instruction value a ChatConfig may carry.
var Instructions = []string{InstructionFreeText, InstructionSlash, InstructionCommand}

// TurnSpec is one query the simulated developer will send.
type TurnSpec struct {
	Query string `json:"query"`
}

// ChatConfig is one dialogue to simulate: where the developer is in which
// repository, how they open the assistant and what they ask.
type ChatConfig struct {
	ID          string     `json:"id"`
	Repo        string     `json:"repo"`
	File        string     `json:"file"`
	Language    string     `json:"language"`
	Cursor      *Position  `json:"cursor,omitempty"`
	Selection   *Selection `json:"selection,omitempty"`
	Trigger     string     `json:"trigger"`
	Instruction string     `json:"instruction"`
	Turns       []TurnSpec `json:"turns"`
	Locale      string     `json:"locale,omitempty"`
	Intent      string     `json:"intent,omitempty"`
	Difficulty  string     `json:"difficulty,omitempty"`
	// Plugin names the adapter of the plugin to drive (a bundled name or
	// an adapter file); empty: the run's default adapter.
	Plugin string `json:"plugin,omitempty"`

	// The fields below are written by configgen and carry the rest of the
	// behaviour profile's cell, so that the run can be compared with it.

	// CursorBehaviour is how Cursor/Selection were chosen: idle,
	// inside_function, whole_function, partial_block, single_line, whole_file.
	CursorBehaviour string `json:"cursor_behaviour,omitempty"`
	// Reference is the code region the query talks about: none, selection,
	// enclosing_function, current_file, open_files.
	Reference string `json:"reference,omitempty"`
	// OpenFiles are other repository-relative files to open (in this order,
	// before File) when Reference is open_files.
	OpenFiles []string `json:"open_files,omitempty"`
	// Symbol names the function the cursor or selection is in, if any.
	Symbol string `json:"symbol,omitempty"`
	// QueryStyle: terse, normal, verbose, or one of those + "_code" when a
	// code snippet is pasted into the query.
	QueryStyle string `json:"query_style,omitempty"`
	// QuerySource says who wrote Turns[0].Query (QuerySource* constants).
	QuerySource string `json:"query_source,omitempty"`
	// FollowUp is the policy for the turns after the pre-written ones; a
	// user simulator writes each at run time from the answer just shown.
	// The dialogue has len(Turns) + len(FollowUp.Kinds) turns.
	FollowUp *FollowUpPolicy `json:"follow_up,omitempty"`
	// PlanCell is the production-plan cell the config was generated for.
	PlanCell string `json:"plan_cell,omitempty"`
}

// Query sources.
const (
	QuerySourceLLM      = "llm"      // written by a model
	QuerySourceTemplate = "template" // template fallback, no model was used
	QuerySourceCommand  = "command"  // the fixed slash form of a plugin command
)

// FollowUpPolicy lists, for each follow-up turn, what kind of message the
// simulated developer sends next: clarify, request_change, ask_tests,
// ask_example, edge_cases, simplify, explain_more.
type FollowUpPolicy struct {
	Kinds []string `json:"kinds"`
}

// TotalTurns is the number of queries the dialogue will have.
func (c ChatConfig) TotalTurns() int {
	n := len(c.Turns)
	if c.FollowUp != nil {
		n += len(c.FollowUp.Kinds)
	}
	return n
}

// Record statuses.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)

// StepTiming is how long one driver step took.
type StepTiming struct {
	Step    string  `json:"step"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// Exchange is one model request the plugin sent to the capture endpoint and
// the answer it was given.
type Exchange struct {
	Session string `json:"session"`
	Seq     int    `json:"seq"`
	// ConfigID and Turn (1-based) are the config and turn the session was
	// driving when the request arrived; a driver takes an exchange only
	// for the turn it is labelled with.
	ConfigID string `json:"config_id,omitempty"`
	Turn     int    `json:"turn,omitempty"`
	// Request is the request body exactly as the plugin sent it.
	Request json.RawMessage `json:"request"`
	// Answer is the text the capture endpoint sent back.
	Answer    string `json:"answer"`
	Responder string `json:"responder"`
	Model     string `json:"model,omitempty"`
	// Offline marks answers from the offline stand-in, which are
	// placeholders and never training data.
	Offline bool   `json:"offline,omitempty"`
	Error   string `json:"error,omitempty"`
	// Auxiliary names the adapter rule that marked the request auxiliary
	// (a title or summary request, not a chat turn). Auxiliary exchanges
	// are answered by a stand-in, kept apart from turns and never exported.
	Auxiliary string `json:"auxiliary,omitempty"`
	// Candidates and Verdicts are filled when a pool and judge answered.
	Candidates []Candidate `json:"candidates,omitempty"`
	// Missing lists the pool members that gave no candidate, and why.
	Missing  []Missing `json:"missing,omitempty"`
	Verdicts []Verdict `json:"verdicts,omitempty"`
	Received time.Time `json:"received"`
	Seconds  float64   `json:"seconds"`
}

// Turn is one query and its answer as it happened in the editor.
type Turn struct {
	Query string `json:"query"`
	Exchange
	// Shown is the answer text the plugin's view displayed.
	Shown string       `json:"shown"`
	Steps []StepTiming `json:"steps"`
}

// Versions names the software a dialogue was recorded with.
type Versions struct {
	CodeServer string `json:"code_server,omitempty"`
	VSCode     string `json:"vscode,omitempty"`
	Plugin     string `json:"plugin,omitempty"`
	Chromium   string `json:"chromium,omitempty"`
}

// Dialogue is the record of one executed ChatConfig.
type Dialogue struct {
	ConfigID   string       `json:"config_id"`
	Status     string       `json:"status"`
	Error      string       `json:"error,omitempty"`
	FailedStep string       `json:"failed_step,omitempty"`
	Artifacts  string       `json:"artifacts,omitempty"`
	Offline    bool         `json:"offline,omitempty"`
	Config     ChatConfig   `json:"config"`
	Setup      []StepTiming `json:"setup_steps,omitempty"`
	Turns      []Turn       `json:"turns"`
	// Auxiliary are the plugin's auxiliary requests during the dialogue,
	// recorded apart from its turns.
	Auxiliary []Exchange `json:"auxiliary,omitempty"`
	Versions  Versions   `json:"versions"`
	Session   string     `json:"session,omitempty"`
	// Worker names the farm worker process that drove the dialogue
	// (host-pid), so records of a farm of many machines say which one.
	Worker    string    `json:"worker,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Seconds   float64   `json:"seconds"`
}

// Candidate is one answer a pool member proposed for a captured request.
type Candidate struct {
	Member           string  `json:"member"`
	Model            string  `json:"model"`
	Text             string  `json:"text"`
	Seconds          float64 `json:"seconds"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	TokensCounted    bool    `json:"tokens_counted,omitempty"`
	CostUSD          float64 `json:"cost_usd"`
	Cached           bool    `json:"cached,omitempty"`
	// Offline marks a placeholder from the offline stand-in.
	Offline bool `json:"offline,omitempty"`
}

// Missing is a pool member that gave no candidate for a request: it
// failed (Reason says how), its circuit breaker was open (Skipped), or it
// had not answered when the pool stopped waiting at its quorum or deadline
// (Late).
type Missing struct {
	Member  string `json:"member"`
	Reason  string `json:"reason"`
	Late    bool   `json:"late,omitempty"`
	Skipped bool   `json:"skipped,omitempty"`
}

// Deduction is one named rule that fired against a candidate.
type Deduction struct {
	Rule   string  `json:"rule"`
	Weight float64 `json:"weight"`
	Reason string  `json:"reason"`
}

// Verdict is the judge's assessment of one candidate.
// Execution is what running an answer against tests showed (the tasks
// stage's execution judge): whether the spliced code built, whether the
// tests passed, and their output.
type Execution struct {
	Built   bool     `json:"built"`
	Passed  bool     `json:"passed"`
	Tests   []string `json:"tests,omitempty"`
	Spliced []string `json:"spliced,omitempty"` // files the answer's code went into
	Output  string   `json:"output,omitempty"`
	Sandbox string   `json:"sandbox,omitempty"` // bwrap, unshare or none
}

type Verdict struct {
	Candidate  int    `json:"candidate"` // index into Exchange.Candidates
	LLMScore   int    `json:"llm_score,omitempty"`
	LLMReason  string `json:"llm_reason,omitempty"`
	Unparsable bool   `json:"unparseable,omitempty"`
	RulesOnly  bool   `json:"rules_only,omitempty"`
	// JudgeError, set with RulesOnly, says why a configured judge model
	// gave no score: the verdict fell back to the rules alone.
	JudgeError string `json:"judge_error,omitempty"`
	// JudgeModel is the model that gave LLMScore ("" in rules-only mode).
	JudgeModel string      `json:"judge_model,omitempty"`
	Deductions []Deduction `json:"deductions,omitempty"`
	// Execution is set when the answer was run against a task's tests.
	Execution *Execution `json:"execution,omitempty"`
	Score     float64    `json:"score"`
	Rank      int        `json:"rank"`
}
