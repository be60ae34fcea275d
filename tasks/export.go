package tasks

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// Instance is one SWE-bench-style task: apply Patch to the skeleton (the
// repository at BaseCommit with SkeletonFiles laid over it, or the
// materialized Workspace) and FailToPass must go from failing to passing
// while PassToPass keep passing.
type Instance struct {
	InstanceID       string   `json:"instance_id"`
	Repo             string   `json:"repo"`
	Language         string   `json:"language"`
	Step             int      `json:"step"`
	BaseCommit       string   `json:"base_commit,omitempty"`
	SkeletonFiles    string   `json:"skeleton_files"` // overlay dir of the files that differ from base_commit
	Workspace        string   `json:"workspace,omitempty"`
	Patch            string   `json:"patch"`
	FailToPass       []string `json:"FAIL_TO_PASS"`
	PassToPass       []string `json:"PASS_TO_PASS"`
	VacuousDropped   []string `json:"vacuous_dropped,omitempty"` // passed on the skeleton; not in FAIL_TO_PASS
	ProblemStatement string   `json:"problem_statement"`
	Functions        []string `json:"functions"`
}

// ExportOptions configures Export.
type ExportOptions struct {
	Profile *profiles.Profile // query style and locale; nil: terse English
	// Materialize writes a full skeleton copy of the repository per
	// exported step (steps/step-N/workspace), the tree drive opens.
	Materialize bool
}

// ExportResult counts what Export wrote.
type ExportResult struct {
	Instances int
	Configs   int
}

// Export writes instances.jsonl and configs.jsonl under out for the steps
// that passed the audit. Chat configs are made for steps whose functions
// sit in one file (at most three): the skeleton file is opened with the
// cursor in the first stub (or the stub selected), and the query asks for
// the implementation in the profile's style and locale.
func Export(ctx context.Context, b *Build, a *Audit, out string, opt ExportOptions) (ExportResult, error) {
	var res ExportResult
	base := gitHead(ctx, b.Repo)
	name := filepath.Base(b.Repo)
	var insts []Instance
	var cfgs []dialog.ChatConfig
	for i, t := range b.Tasks {
		sa := a.Steps[i]
		if !sa.Passed {
			continue
		}
		patch, err := os.ReadFile(t.Patch)
		if err != nil {
			return res, err
		}
		req, err := os.ReadFile(t.Requirement)
		if err != nil {
			return res, err
		}
		inst := Instance{InstanceID: fmt.Sprintf("%s__step-%03d", name, t.Step), Repo: b.Repo, Language: b.Language, Step: t.Step,
			BaseCommit: base, SkeletonFiles: t.SkeletonDir, Patch: string(patch), PassToPass: t.PassToPass,
			VacuousDropped: sa.Vacuous, ProblemStatement: string(req)}
		for _, id := range t.FailToPass {
			if !slices.Contains(sa.Vacuous, id) {
				inst.FailToPass = append(inst.FailToPass, id)
			}
		}
		for _, n := range t.Nodes {
			inst.Functions = append(inst.Functions, n.Name)
		}
		if opt.Materialize {
			inst.Workspace = filepath.Join(filepath.Dir(t.SkeletonDir), "workspace")
			if err := os.RemoveAll(inst.Workspace); err != nil {
				return res, err
			}
			if err := copyTree(b.Repo, inst.Workspace); err != nil {
				return res, fmt.Errorf("materialize step %d: %w", t.Step, err)
			}
			if err := writeFiles(inst.Workspace, b.States[i]); err != nil {
				return res, err
			}
			if c, ok := chatConfig(b, i, inst, opt.Profile); ok {
				cfgs = append(cfgs, c)
				tc, err := testsConfig(b, i, c, opt.Profile)
				if err != nil {
					return res, err
				}
				cfgs = append(cfgs, tc)
			}
		}
		insts = append(insts, inst)
	}
	if err := writeJSONL(filepath.Join(out, "instances.jsonl"), insts); err != nil {
		return res, err
	}
	if err := writeJSONL(filepath.Join(out, "configs.jsonl"), cfgs); err != nil {
		return res, err
	}
	return ExportResult{Instances: len(insts), Configs: len(cfgs)}, nil
}

func writeJSONL[T any](path string, rows []T) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func gitHead(ctx context.Context, repo string) string {
	res, err := runCmd(ctx, repo, nil, 0, "git", "rev-parse", "HEAD")
	if err != nil || res.ExitCode != 0 {
		return ""
	}
	return strings.TrimSpace(res.Output)
}

// testsQueryTemplates: locale → style → template for the tests intent.
var testsQueryTemplates = map[string]map[string]string{
	"en": {
		vocab.StyleTerse:   "write tests for %s",
		vocab.StyleNormal:  "Please write unit tests for %s.",
		vocab.StyleVerbose: "Could you write unit tests for %s? They should check its behaviour, including edge cases, and pass with the current implementation.",
	},
	"zh": {
		vocab.StyleTerse:   "给 %s 写测试",
		vocab.StyleNormal:  "请为 %s 编写单元测试。",
		vocab.StyleVerbose: "请为 %s 编写单元测试，覆盖它的主要行为和边界情况，并且在当前实现下全部通过。",
	},
}

// ReferenceWorkspace is where Export materializes step n's reference state
// (the skeleton with the reference patch applied): the tree a tests-intent
// dialogue opens.
func referenceWorkspace(t StepTask) string {
	return filepath.Join(filepath.Dir(t.SkeletonDir), "reference-workspace")
}

// testsConfig is the tests-intent twin of a step's generate config: the
// reference state opened, the implemented function selected, a request
// for unit tests. Its id is the instance id + "__tests".
func testsConfig(b *Build, i int, gen dialog.ChatConfig, p *profiles.Profile) (dialog.ChatConfig, error) {
	t := b.Tasks[i]
	ws := referenceWorkspace(t)
	if err := os.RemoveAll(ws); err != nil {
		return dialog.ChatConfig{}, err
	}
	if err := copyTree(b.Repo, ws); err != nil {
		return dialog.ChatConfig{}, fmt.Errorf("materialize the reference of step %d: %w", t.Step, err)
	}
	if err := writeFiles(ws, b.States[i+1]); err != nil {
		return dialog.ChatConfig{}, err
	}
	src, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(gen.File)))
	if err != nil {
		return dialog.ChatConfig{}, err
	}
	c := gen
	c.ID, c.Repo, c.Intent, c.Cursor = gen.ID+"__tests", ws, vocab.IntentTests, nil
	c.PlanCell = "tasks:" + c.ID
	start, end := defLines(src, t.Nodes[0], b.Language)
	c.Selection = &dialog.Selection{Start: dialog.Position{Line: start, Col: 1}, End: dialog.Position{Line: end + 1, Col: 1}}
	c.CursorBehaviour, c.Reference = vocab.CursorWholeFunction, vocab.RefSelection
	style := c.QueryStyle
	if _, ok := testsQueryTemplates[c.Locale][style]; !ok {
		style = vocab.StyleTerse
	}
	c.Turns = []dialog.TurnSpec{{Query: fmt.Sprintf(testsQueryTemplates[c.Locale][style], c.Symbol)}}
	if err := c.Validate(); err != nil {
		return dialog.ChatConfig{}, fmt.Errorf("tests config of step %d: %w", t.Step, err)
	}
	return c, nil
}

// defLines finds a function's first and last line in src by its name:
// Go by parsing, Python by the def line's indentation.
func defLines(src []byte, n Node, lang string) (int, int) {
	short := n.Name[strings.LastIndexAny(n.Name, ".")+1:]
	lines := strings.Split(string(src), "\n")
	if lang == LangGo {
		fset := token.NewFileSet()
		if f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution); err == nil {
			want := n.Name[strings.LastIndex(n.Name, "/")+1:]
			want = want[strings.Index(want, ".")+1:]
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && goFuncName(fd) == want {
					return fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
				}
			}
		}
		return n.Line, n.EndLine
	}
	from := 0
	if cls, _, ok := strings.Cut(n.Name, "."); ok {
		for i, l := range lines {
			if strings.HasPrefix(l, "class "+cls+"(") || strings.HasPrefix(l, "class "+cls+":") {
				from = i
				break
			}
		}
	}
	for i := from; i < len(lines); i++ {
		l := lines[i]
		trimmed := strings.TrimLeft(l, " ")
		if !strings.HasPrefix(trimmed, "def "+short+"(") && !strings.HasPrefix(trimmed, "async def "+short+"(") {
			continue
		}
		indent := len(l) - len(trimmed)
		end := i + 1
		for end < len(lines) && (strings.TrimSpace(lines[end]) == "" || len(lines[end])-len(strings.TrimLeft(lines[end], " ")) > indent) {
			end++
		}
		for end > i+1 && strings.TrimSpace(lines[end-1]) == "" {
			end--
		}
		return i + 1, end
	}
	return n.Line, n.EndLine
}

// queryTemplates: locale → style → template; %s is the function name.
var queryTemplates = map[string]map[string]string{
	"en": {
		vocab.StyleTerse:   "implement %s",
		vocab.StyleNormal:  "Please implement %s so that its tests pass.",
		vocab.StyleVerbose: "The function %s is still a stub. Could you write its implementation? It should satisfy the existing tests and keep the signature unchanged.",
	},
	"zh": {
		vocab.StyleTerse:   "实现 %s",
		vocab.StyleNormal:  "请实现 %s，让相关测试通过。",
		vocab.StyleVerbose: "函数 %s 目前只是一个占位实现。请帮我写出它的完整实现，保持函数签名不变，并让现有的测试全部通过。",
	},
}

func chatConfig(b *Build, i int, inst Instance, p *profiles.Profile) (dialog.ChatConfig, bool) {
	t := b.Tasks[i]
	if len(t.Nodes) == 0 || len(t.Nodes) > 3 {
		return dialog.ChatConfig{}, false
	}
	file := t.Nodes[0].File
	for _, n := range t.Nodes {
		if n.File != file {
			return dialog.ChatConfig{}, false
		}
	}
	src := b.States[i][file]
	target := t.Nodes[0]
	start, end, stub := stubLines(src, target, b.Language)
	if stub == 0 {
		return dialog.ChatConfig{}, false
	}
	rng := rand.New(rand.NewPCG(uint64(t.Step), 0x7a5c))
	if p != nil {
		rng = rand.New(rand.NewPCG(uint64(p.Seed), uint64(t.Step)))
	}
	locale := pick(rng, p, vocab.DimLocale, []string{"en", "zh"}, "en")
	style := strings.TrimSuffix(pick(rng, p, vocab.DimQueryStyle, []string{"terse", "normal", "verbose", "terse_code", "normal_code", "verbose_code"}, "terse"), "_code")
	cursor := pick(rng, p, vocab.DimCursor, []string{vocab.CursorInsideFunction, vocab.CursorWholeFunction}, vocab.CursorInsideFunction)
	short := target.Name[strings.LastIndex(target.Name, "/")+1:]
	c := dialog.ChatConfig{
		ID: inst.InstanceID, Repo: inst.Workspace, File: file, Language: b.Language,
		Trigger: dialog.TriggerPanel, Instruction: dialog.InstructionFreeText,
		Turns:  []dialog.TurnSpec{{Query: fmt.Sprintf(queryTemplates[locale][style], short)}},
		Locale: locale, Intent: vocab.IntentGenerate, Difficulty: vocab.DifficultyMedium,
		CursorBehaviour: cursor, Reference: vocab.RefEnclosingFunction, Symbol: short, QueryStyle: style,
		QuerySource: "template", PlanCell: "tasks:" + inst.InstanceID,
	}
	if t.FailToPass != nil {
		if tf := testFile(b.Graph, t.FailToPass[0]); tf != "" && tf != file {
			c.OpenFiles = []string{tf}
		}
	}
	if cursor == vocab.CursorWholeFunction {
		c.Selection = &dialog.Selection{Start: dialog.Position{Line: start, Col: 1}, End: dialog.Position{Line: end + 1, Col: 1}}
	} else {
		c.Cursor = &dialog.Position{Line: stub, Col: 1}
	}
	return c, c.Validate() == nil
}

// pick draws a value of dim from the profile's weights restricted to
// allowed; def when the profile is nil or gives none of them weight.
func pick(rng *rand.Rand, p *profiles.Profile, dim string, allowed []string, def string) string {
	if p == nil {
		return def
	}
	var vals []string
	var ws []float64
	total := 0.0
	for _, w := range p.Dimensions[dim] {
		if slices.Contains(allowed, w.Value) && w.Weight > 0 {
			vals, ws = append(vals, w.Value), append(ws, w.Weight)
			total += w.Weight
		}
	}
	if total == 0 {
		return def
	}
	x := rng.Float64() * total
	for i, w := range ws {
		if x < w {
			return vals[i]
		}
		x -= w
	}
	return vals[len(vals)-1]
}

// stubLines finds, in a skeleton file, the node's first line, last line and
// the line of its stub statement (0 when not found).
func stubLines(src []byte, n Node, lang string) (start, end, stub int) {
	lines := strings.Split(string(src), "\n")
	marker := "TODO: implement"
	for i := n.Line - 1; i < len(lines); i++ {
		if strings.Contains(lines[i], marker) {
			stub = i + 1
			break
		}
	}
	if stub == 0 {
		return 0, 0, 0
	}
	end = stub
	if lang == LangGo {
		for end < len(lines) && strings.TrimSpace(lines[end-1]) != "}" {
			end++
		}
	}
	return n.Line, end, stub
}

func testFile(g *Graph, id string) string {
	for _, t := range g.Tests {
		if t.ID == id {
			return t.File
		}
	}
	return ""
}
