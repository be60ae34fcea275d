package tasks

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"slices"
	"strings"

	"golang.org/x/tools/imports"
)

// stubGo replaces the bodies of the functions declared on the given lines
// (the line of the func keyword) with panic("TODO: implement Name"), prunes
// the imports only those bodies used and formats the file. Everything
// outside the replaced bodies stays byte for byte (up to gofmt).
func stubGo(filename string, src []byte, lines map[int]bool) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", filename, err)
	}
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || !lines[fset.Position(fd.Type.Func).Line] {
			continue
		}
		edits = append(edits, edit{
			from: fset.Position(fd.Body.Lbrace).Offset + 1,
			to:   fset.Position(fd.Body.Rbrace).Offset,
			text: fmt.Sprintf("\n\tpanic(%q)\n", "TODO: implement "+goFuncName(fd)),
		})
	}
	if len(edits) != len(lines) {
		return nil, fmt.Errorf("stub %s: found %d of the %d functions to stub", filename, len(edits), len(lines))
	}
	out := slices.Clone(src)
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		out = slices.Concat(out[:e.from], []byte(e.text), out[e.to:])
	}
	before, after := goQualifiers(f), map[string]bool{}
	if g, err := parser.ParseFile(token.NewFileSet(), filename, out, parser.SkipObjectResolution); err == nil {
		after = goQualifiers(g)
	} else {
		return nil, fmt.Errorf("stub %s: the stubbed file does not parse: %w", filename, err)
	}
	shrank := false
	for q := range before {
		if !after[q] {
			shrank = true
		}
	}
	if !shrank {
		b, err := format.Source(out)
		if err != nil {
			return nil, fmt.Errorf("gofmt stubbed %s: %w", filename, err)
		}
		return b, nil
	}
	// goimports knows each import's package name (from the module), so it
	// removes exactly the imports nothing uses any more.
	b, err := imports.Process(filename, out, &imports.Options{Comments: true, TabIndent: true, TabWidth: 8})
	if err != nil {
		return nil, fmt.Errorf("prune imports of stubbed %s: %w", filename, err)
	}
	return b, nil
}

// goQualifiers returns the identifiers used as X in X.Sel expressions.
func goQualifiers(f *ast.File) map[string]bool {
	q := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok {
				q[id.Name] = true
			}
		}
		return true
	})
	return q
}

// isStubFailure reports whether a test's output shows a stub's own error.
func isStubFailure(lang, output string) bool {
	if lang == LangGo {
		return strings.Contains(output, "TODO: implement")
	}
	return strings.Contains(output, "NotImplementedError")
}
