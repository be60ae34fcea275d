package tasks

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// queryTemplates: locale → style → {one function, several}; %s is the
// function name or the list of names.
var queryTemplates = map[string]map[string][2]string{
	"en": {
		vocab.StyleTerse:  {"implement %s", "implement %s"},
		vocab.StyleNormal: {"Please implement %s so that its tests pass.", "Please implement %s so that their tests pass."},
		vocab.StyleVerbose: {"The function %s is still a stub. Could you write its implementation? It should satisfy the existing tests and keep the signature unchanged.",
			"The functions %s are still stubs. Could you write their implementations? They should satisfy the existing tests and keep their signatures unchanged."},
	},
	"zh": {
		vocab.StyleTerse:  {"实现 %s", "实现 %s"},
		vocab.StyleNormal: {"请实现 %s，让相关测试通过。", "请实现 %s，让相关测试通过。"},
		vocab.StyleVerbose: {"函数 %s 目前只是一个占位实现。请帮我写出它的完整实现，保持函数签名不变，并让现有的测试全部通过。",
			"函数 %s 目前都只是占位实现。请帮我写出它们的完整实现，保持函数签名不变，并让现有的测试全部通过。"},
	},
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

// nameList joins function names the way locale writes a list: "A, B and
// C", "A、B 和 C".
func nameList(locale string, names []string) string {
	sep, and := ", ", " and "
	if locale == "zh" {
		sep, and = "、", " 和 "
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], sep) + and + names[len(names)-1]
}

// displayName is how a query names a node: Go pkg.Func, pkg.(*T).M
// (import path left out), Python the qualified name.
func displayName(n Node) string { return n.Name[strings.LastIndex(n.Name, "/")+1:] }

// chatConfig is the generate config of step i: the skeleton opened at
// the step's functions' file, the cursor in the first stub (or that
// function selected), and a query that names every function the step
// stubs, so an answer to the question asked is an answer to the step.
// Steps whose functions are in several files, or more than three, get
// none.
func chatConfig(b *Build, i int, inst Instance, repo string, p *profiles.Profile) (dialog.ChatConfig, bool) {
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
	decls := b.decls[i]
	order := make([]int, len(t.Nodes)) // the step's functions in file order
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(x, y int) int { return decls[x].Line - decls[y].Line })
	first := order[0]
	start, end := decls[first].Line, decls[first].EndLine
	stub := stubLine(b.States[i][file], start, end)
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
	var names []string
	for _, k := range order {
		names = append(names, displayName(t.Nodes[k]))
	}
	tmpl := queryTemplates[locale][style][0]
	if len(names) > 1 {
		tmpl = queryTemplates[locale][style][1]
	}
	c := dialog.ChatConfig{
		ID: inst.InstanceID, Repo: repo, File: file, Language: b.Language,
		Trigger: dialog.TriggerPanel, Instruction: dialog.InstructionFreeText,
		Turns:  []dialog.TurnSpec{{Query: fmt.Sprintf(tmpl, nameList(locale, names))}},
		Locale: locale, Intent: vocab.IntentGenerate, Difficulty: vocab.DifficultyMedium,
		CursorBehaviour: cursor, Reference: vocab.RefEnclosingFunction, Symbol: names[0], QueryStyle: style,
		QuerySource: "template", PlanCell: "tasks:" + inst.InstanceID,
	}
	if len(t.FailToPass) > 0 {
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

// stubLine is the line of the stub statement between lines start and end
// of a skeleton file (0 when there is none).
func stubLine(src []byte, start, end int) int {
	lines := strings.Split(string(src), "\n")
	for l := start; l <= end && l <= len(lines); l++ {
		if strings.Contains(lines[l-1], "TODO: implement") {
			return l
		}
	}
	return 0
}

// referenceWorkspace is where Export materializes step n's reference state
// (the skeleton with the reference patch applied): the tree a tests-intent
// dialogue opens.
func referenceWorkspace(t StepTask) string {
	return filepath.Join(filepath.Dir(t.SkeletonDir), "reference-workspace")
}

// testsConfig is the tests-intent twin of a step's generate config: the
// reference state opened, the generate config's first function selected,
// a request for unit tests. Its id is the instance id + "__tests".
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
	defs, err := defsOf(b.Language, b.opt.Python, gen.File, src)
	if err != nil {
		return dialog.ChatConfig{}, fmt.Errorf("tests config of step %d: %w", t.Step, err)
	}
	var target Node
	for _, n := range t.Nodes {
		if displayName(n) == gen.Symbol {
			target = n
		}
	}
	var orig []funcDef
	if f, ok := b.index.files[target.File]; ok {
		orig = f.defs
	}
	d, ok := findDef(defs, orig, target)
	if !ok || target.File == "" {
		return dialog.ChatConfig{}, fmt.Errorf("tests config of step %d: %s is not in %s", t.Step, gen.Symbol, gen.File)
	}
	c := gen
	c.ID, c.Repo, c.Intent, c.Cursor = gen.ID+"__tests", ws, vocab.IntentTests, nil
	c.PlanCell = "tasks:" + c.ID
	c.Selection = &dialog.Selection{Start: dialog.Position{Line: d.Line, Col: 1}, End: dialog.Position{Line: d.EndLine + 1, Col: 1}}
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

func testFile(g *Graph, id string) string {
	for _, t := range g.Tests {
		if t.ID == id {
			return t.File
		}
	}
	return ""
}
