package configgen

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"unicode/utf8"

	sitter "github.com/tree-sitter/go-tree-sitter"
	tsgo "github.com/tree-sitter/tree-sitter-go/bindings/go"
	tsjava "github.com/tree-sitter/tree-sitter-java/bindings/go"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspy "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// langSpec says which tree-sitter nodes are functions, which wrap a
// function (and are selected with it), which are top-level symbols (the
// idle cursor stays outside them) and which hold a body's statements.
type langSpec struct {
	name     string
	language func() *sitter.Language
	funcs    []string
	wrappers []string
	symbols  []string
	blocks   []string
}

var jsFuncs = []string{"function_declaration", "generator_function_declaration", "method_definition",
	"function_expression", "arrow_function", "function"}

// languages returns the supported languages by name (VS Code language IDs).
func languages() map[string]langSpec {
	return map[string]langSpec{
		"go": {name: "go", language: func() *sitter.Language { return sitter.NewLanguage(tsgo.Language()) },
			funcs:   []string{"function_declaration", "method_declaration"},
			symbols: []string{"function_declaration", "method_declaration", "type_declaration", "var_declaration", "const_declaration"},
			blocks:  []string{"block", "statement_list"}},
		"python": {name: "python", language: func() *sitter.Language { return sitter.NewLanguage(tspy.Language()) },
			funcs: []string{"function_definition"}, wrappers: []string{"decorated_definition"},
			symbols: []string{"function_definition", "class_definition", "decorated_definition"},
			blocks:  []string{"block"}},
		"javascript": {name: "javascript", language: func() *sitter.Language { return sitter.NewLanguage(tsjs.Language()) },
			funcs: jsFuncs, wrappers: []string{"export_statement", "lexical_declaration", "variable_declaration"},
			symbols: []string{"function_declaration", "generator_function_declaration", "class_declaration",
				"lexical_declaration", "variable_declaration", "export_statement"},
			blocks: []string{"statement_block"}},
		"typescript": {name: "typescript", language: func() *sitter.Language { return sitter.NewLanguage(tsts.LanguageTypescript()) },
			funcs: jsFuncs, wrappers: []string{"export_statement", "lexical_declaration", "variable_declaration"},
			symbols: []string{"function_declaration", "generator_function_declaration", "class_declaration",
				"abstract_class_declaration", "lexical_declaration", "variable_declaration", "export_statement",
				"interface_declaration", "type_alias_declaration", "enum_declaration", "module", "internal_module"},
			blocks: []string{"statement_block"}},
		"java": {name: "java", language: func() *sitter.Language { return sitter.NewLanguage(tsjava.Language()) },
			funcs: []string{"method_declaration", "constructor_declaration"},
			symbols: []string{"class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
				"annotation_type_declaration"},
			blocks: []string{"block", "constructor_body"}},
	}
}

// span is a region of a file: 0-based rows, byte columns, end exclusive.
type span struct {
	startRow, startCol, endRow, endCol int
}

func spanOf(n *sitter.Node) span {
	s, e := n.StartPosition(), n.EndPosition()
	return span{int(s.Row), int(s.Column), int(e.Row), int(e.Column)}
}

// function is one function with a body, and the regions inside it.
type function struct {
	name  string
	outer span // the function with its wrapper (decorators, export, const x =)
	body  span
	// stmtRows are rows where a statement of the body starts; oneLine the
	// statements that fit on one row; blocks candidate partial blocks.
	stmtRows []int
	oneLine  []int
	blocks   []span
}

// parsed is what configgen needs to know about one source file.
type parsed struct {
	src       []byte
	lineStart []int // byte offset of each row
	funcs     []function
	idleRows  []int // rows outside every top-level symbol
	hasError  bool
}

// parse runs tree-sitter on src and extracts functions and idle rows.
func parse(ctx context.Context, spec langSpec, parser *sitter.Parser, src []byte) (*parsed, error) {
	if err := parser.SetLanguage(spec.language()); err != nil {
		return nil, fmt.Errorf("set %s grammar: %w", spec.name, err)
	}
	tree := parser.ParseWithOptions(func(i int, _ sitter.Point) []byte {
		if i < len(src) {
			return src[i:]
		}
		return nil
	}, nil, &sitter.ParseOptions{ProgressCallback: func(sitter.ParseState) bool { return ctx.Err() != nil }})
	if tree == nil {
		return nil, fmt.Errorf("parse %s: %w", spec.name, context.Cause(ctx))
	}
	defer tree.Close()
	root := tree.RootNode()
	p := &parsed{src: src, lineStart: lineStarts(src), hasError: root.HasError()}
	covered := make([]bool, len(p.lineStart))
	for i := uint(0); i < root.NamedChildCount(); i++ {
		child := root.NamedChild(i)
		if slices.Contains(spec.symbols, child.Kind()) {
			s := spanOf(child)
			for r := s.startRow; r <= s.endRow && r < len(covered); r++ {
				covered[r] = true
			}
		}
	}
	walkFuncs(spec, root, src, p)
	for r, c := range covered {
		if !c && !p.insideFunction(r) {
			p.idleRows = append(p.idleRows, r)
		}
	}
	return p, nil
}

func (p *parsed) insideFunction(row int) bool {
	for _, f := range p.funcs {
		if row >= f.outer.startRow && row <= f.outer.endRow {
			return true
		}
	}
	return false
}

func walkFuncs(spec langSpec, n *sitter.Node, src []byte, p *parsed) {
	if slices.Contains(spec.funcs, n.Kind()) {
		if f, ok := makeFunction(spec, n, src); ok {
			p.funcs = append(p.funcs, f)
		}
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		walkFuncs(spec, n.NamedChild(i), src, p)
	}
}

func makeFunction(spec langSpec, n *sitter.Node, src []byte) (function, bool) {
	body := n.ChildByFieldName("body")
	if body == nil || !slices.Contains(spec.blocks, body.Kind()) {
		return function{}, false // no body, or an expression body
	}
	name := ""
	if id := n.ChildByFieldName("name"); id != nil {
		name = id.Utf8Text(src)
	}
	outer := n
	for parent := n.Parent(); parent != nil && slices.Contains(spec.wrappers, parent.Kind()); parent = parent.Parent() {
		if (parent.Kind() == "lexical_declaration" || parent.Kind() == "variable_declaration") && parent.NamedChildCount() != 1 {
			break
		}
		outer = parent
	}
	if name == "" {
		// const f = () => {...}: the declarator names it.
		if d := n.Parent(); d != nil && d.Kind() == "variable_declarator" {
			if id := d.ChildByFieldName("name"); id != nil {
				name = id.Utf8Text(src)
			}
			if decl := d.Parent(); decl != nil && slices.Contains(spec.wrappers, decl.Kind()) && decl.NamedChildCount() == 1 {
				outer = decl
				if ex := decl.Parent(); ex != nil && ex.Kind() == "export_statement" {
					outer = ex
				}
			}
		}
	}
	if name == "" {
		return function{}, false // anonymous callbacks are not "the function" a developer selects
	}
	f := function{name: name, outer: spanOf(outer), body: spanOf(body)}
	collectStatements(spec, body, f.outer.startRow, &f, true)
	slices.Sort(f.stmtRows)
	f.stmtRows = slices.Compact(f.stmtRows)
	slices.Sort(f.oneLine)
	f.oneLine = slices.Compact(f.oneLine)
	return f, true
}

// statements returns the statement nodes of a block, looking through a
// single statement_list (Go grammars that have one).
func statements(spec langSpec, block *sitter.Node) []*sitter.Node {
	var out []*sitter.Node
	for i := uint(0); i < block.NamedChildCount(); i++ {
		c := block.NamedChild(i)
		if c.Kind() == "statement_list" {
			return statements(spec, c)
		}
		if c.Kind() == "comment" || c.IsExtra() {
			continue
		}
		out = append(out, c)
	}
	return out
}

func collectStatements(spec langSpec, block *sitter.Node, headRow int, f *function, top bool) {
	stmts := statements(spec, block)
	for _, st := range stmts {
		if slices.Contains(spec.funcs, st.Kind()) || st.Kind() == "decorated_definition" {
			continue // a nested named function is a function of its own
		}
		s := spanOf(st)
		if s.startRow > headRow {
			f.stmtRows = append(f.stmtRows, s.startRow)
			if s.startRow == s.endRow {
				f.oneLine = append(f.oneLine, s.startRow)
			}
		}
		if s.endRow > s.startRow && s.startRow > headRow && !(top && len(stmts) == 1) {
			f.blocks = append(f.blocks, s) // a multi-line compound statement
		}
		for i := uint(0); i < st.NamedChildCount(); i++ {
			collectNested(spec, st.NamedChild(i), headRow, f)
		}
	}
	if top && len(stmts) >= 3 {
		// Runs of 2 to 4 consecutive statements, never all of them.
		for k := 2; k <= 4 && k < len(stmts); k++ {
			for i := 0; i+k <= len(stmts); i++ {
				first, last := spanOf(stmts[i]), spanOf(stmts[i+k-1])
				if first.startRow > headRow && last.endRow > first.startRow {
					f.blocks = append(f.blocks, span{first.startRow, first.startCol, last.endRow, last.endCol})
				}
			}
		}
	}
}

// collectNested descends into nested blocks (if/for bodies) but not into
// nested functions, which are functions of their own.
func collectNested(spec langSpec, n *sitter.Node, headRow int, f *function) {
	if slices.Contains(spec.funcs, n.Kind()) {
		return
	}
	if slices.Contains(spec.blocks, n.Kind()) {
		collectStatements(spec, n, headRow, f, false)
		return
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		collectNested(spec, n.NamedChild(i), headRow, f)
	}
}

func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, b := range src {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// line returns row's bytes without the newline.
func (p *parsed) line(row int) []byte {
	start := p.lineStart[row]
	end := len(p.src)
	if row+1 < len(p.lineStart) {
		end = p.lineStart[row+1] - 1
	}
	return bytes.TrimRight(p.src[start:end], "\r")
}

// col converts a byte column of row to a 1-based character column.
func (p *parsed) col(row, byteCol int) int {
	l := p.line(row)
	byteCol = min(byteCol, len(l))
	return utf8.RuneCount(l[:byteCol]) + 1
}

// trimmed returns the byte columns of row's first and past-last
// non-whitespace characters (equal when the row is blank).
func (p *parsed) trimmed(row int) (int, int) {
	l := p.line(row)
	start := len(l) - len(bytes.TrimLeft(l, " \t"))
	end := len(bytes.TrimRight(l, " \t"))
	if end < start {
		end = start
	}
	return start, end
}

// text returns the source of rows [from, to] (0-based, inclusive).
func (p *parsed) text(from, to int) string {
	from, to = max(from, 0), min(to, len(p.lineStart)-1)
	end := len(p.src)
	if to+1 < len(p.lineStart) {
		end = p.lineStart[to+1]
	}
	return string(p.src[p.lineStart[from]:end])
}
