package coherence

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode"

	"dialogfarm/dialog/vocab"
)

// Rules, as Finding.Rule.
const (
	RuleFile      = "file_not_in_context"
	RuleSymbol    = "symbol_not_in_context"
	RuleTerm      = "term_not_in_context"
	RuleDuplicate = "duplicate_code"
	RuleFollowUp  = "follow_up_presupposes"
)

// Rules lists every rule, in the order findings are reported.
func Rules() []string { return []string{RuleFile, RuleSymbol, RuleTerm, RuleDuplicate, RuleFollowUp} }

// Context is what the developer has in front of them when a query is
// sent.
type Context struct {
	// File is the file open in the editor, repository-relative.
	File string
	// Shown is the code the plugin sends with the query: the selection,
	// or the lines around the cursor.
	Shown string
	// Files are other files a query may quote, by repository-relative
	// path: naming one is coherent when the query pastes a block of it.
	Files map[string]string
}

// Finding is one incoherence: which rule, and what it found ("report.py",
// "`parseRow`", "CSV").
type Finding struct {
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

func (f Finding) String() string { return f.Rule + ": " + f.Detail }

// query is a query taken apart: its prose (fenced blocks and pasted code
// lines left out, inline code kept) and the code it pastes.
type query struct {
	prose  string
	blocks []string // fenced blocks and runs of pasted code lines
	inline []string // `inline code` that is not a bare identifier
}

var (
	backtick  = regexp.MustCompile("`([^`\n]+)`")
	identExpr = regexp.MustCompile(`^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*(\(\))?$`)
	identTok  = regexp.MustCompile(`[A-Za-z_$][\w$]*`)
	url       = regexp.MustCompile(`[a-z][a-z0-9+.-]*://\S+`)
	// fileName: a path ending in a source, build or data file extension.
	fileName = regexp.MustCompile(`(?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:go|py|pyi|js|mjs|cjs|jsx|ts|mts|cts|tsx|java|kt|rb|rs|c|h|cc|cpp|hpp|cs|php|swift|scala|json|ya?ml|toml|ini|md|txt|sql|sh|html|css|xml|gradle|mod|sum|lock|csv|proto)\b`)
	// product: Node.js, Vue.js and the like are names, not files.
	product  = regexp.MustCompile(`^[A-Z][a-z]+\.js$`)
	call     = regexp.MustCompile(`\b[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\(\)`)
	snake    = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9]\b`)
	camel    = regexp.MustCompile(`\b[a-z]+[A-Z][A-Za-z0-9]*\b`)
	pascal   = regexp.MustCompile(`\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b`)
	dotted   = regexp.MustCompile(`\b[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+\b`)
	acronym  = regexp.MustCompile(`\b[A-Z]{2,6}s?\b`)
	fenceTag = regexp.MustCompile("^\\s{0,3}(```|~~~)")
)

// names are names of languages, tools and products, which are not
// symbols of the code whatever their spelling.
var names = setOf("JavaScript", "TypeScript", "GitHub", "GitLab", "PostgreSQL", "MySQL", "MongoDB", "NumPy", "PyTorch",
	"TensorFlow", "IntelliJ", "PowerShell", "WebSocket", "WebSockets", "OAuth", "GraphQL", "JavaDoc", "JSDoc", "GoDoc",
	"DevOps", "YouTube", "LinkedIn", "iOS", "macOS", "iPhone", "VSCode", "VSCodium", "CodeServer", "JetBrains", "PyPI",
	"PyCharm", "GoLand", "WebStorm", "SQLite", "NoSQL", "ChatGPT", "OpenAI", "CPython", "GraalVM", "OpenJDK", "README")

// chatTerms are abbreviations of chat, not subjects of the code.
var chatTerms = setOf("OK", "PR", "PRs", "API", "APIs", "IDE", "AI", "ASAP", "FYI", "IMO", "IMHO", "TLDR", "TL", "DR",
	"LGTM", "WIP", "TODO", "TODOs", "FIXME", "PTAL", "BTW", "AFAIK", "TBH", "IIRC", "ETA", "QA", "UI", "UX")

func setOf(v ...string) map[string]bool {
	m := make(map[string]bool, len(v))
	for _, s := range v {
		m[s] = true
	}
	return m
}

// parse takes a query apart.
func parse(text string) query {
	var q query
	var prose, block, loose []string
	fence := ""
	lines := strings.Split(text, "\n")
	multi := len(lines) > 1
	flushLoose := func() {
		if len(loose) >= 2 {
			q.blocks = append(q.blocks, strings.Join(loose, "\n"))
		} else {
			prose = append(prose, loose...)
		}
		loose = nil
	}
	for _, line := range lines {
		if m := fenceTag.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				flushLoose()
				fence = m[1]
				continue
			case m[1] == fence:
				q.blocks = append(q.blocks, strings.Join(block, "\n"))
				block, fence = nil, ""
				continue
			}
		}
		if fence != "" {
			block = append(block, line)
			continue
		}
		if multi && vocab.LooksLikeCode(line) {
			loose = append(loose, line)
			continue
		}
		flushLoose()
		prose = append(prose, line)
	}
	flushLoose()
	if fence != "" { // an unclosed fence still pastes its lines
		q.blocks = append(q.blocks, strings.Join(block, "\n"))
	}
	q.prose = strings.Join(prose, "\n")
	for _, m := range backtick.FindAllStringSubmatch(q.prose, -1) {
		if !identExpr.MatchString(strings.TrimSpace(m[1])) {
			q.inline = append(q.inline, m[1])
		}
	}
	return q
}

// pool is the code a query's names may come from.
type pool struct {
	idents map[string]bool
	lower  string
}

func newPool(ctx Context, q query) pool {
	parts := append([]string{ctx.Shown}, q.blocks...)
	parts = append(parts, q.inline...)
	text := strings.Join(parts, "\n")
	p := pool{idents: map[string]bool{}, lower: strings.ToLower(text + "\n" + ctx.File)}
	for _, id := range identTok.FindAllString(text, -1) {
		p.idents[id] = true
	}
	return p
}

// hasIdent reports whether every part of a dotted name occurs as an
// identifier.
func (p pool) hasIdent(name string) bool {
	name = strings.TrimSuffix(name, "()")
	for part := range strings.SplitSeq(name, ".") {
		if !p.idents[part] {
			return false
		}
	}
	return true
}

// CheckQuery applies the query rules (see the package doc) to a query
// sent with ctx, and returns what they found, in rule order.
func CheckQuery(text string, ctx Context) []Finding {
	q := parse(text)
	p := newPool(ctx, q)
	var out []Finding
	seen := map[string]bool{}
	add := func(rule, detail string) {
		if !seen[rule+"\x00"+detail] {
			seen[rule+"\x00"+detail] = true
			out = append(out, Finding{Rule: rule, Detail: detail})
		}
	}
	prose := url.ReplaceAllString(q.prose, " ")
	for _, f := range fileName.FindAllString(prose, -1) {
		if !product.MatchString(f) && !fileShown(f, ctx, q) {
			add(RuleFile, f)
		}
	}
	prose = fileName.ReplaceAllString(prose, " ")
	for _, m := range backtick.FindAllStringSubmatch(prose, -1) {
		if id := strings.TrimSpace(m[1]); identExpr.MatchString(id) && !names[id] && !p.hasIdent(id) {
			add(RuleSymbol, "`"+id+"`")
		}
	}
	bare := backtick.ReplaceAllString(prose, " ")
	for _, re := range []*regexp.Regexp{call, dotted, snake, camel, pascal} {
		for _, id := range re.FindAllString(bare, -1) {
			if !names[strings.TrimSuffix(id, "()")] && !p.hasIdent(id) {
				add(RuleSymbol, id)
			}
		}
		bare = re.ReplaceAllString(bare, " ")
	}
	for _, a := range acronym.FindAllString(bare, -1) {
		if chatTerms[a] || names[a] {
			continue
		}
		if !strings.Contains(p.lower, strings.ToLower(strings.TrimSuffix(a, "s"))) {
			add(RuleTerm, a)
		}
	}
	for _, d := range duplicates(q, ctx.Shown) {
		add(RuleDuplicate, d)
	}
	return out
}

// fileShown reports whether a file a query names is the open file,
// appears in the code shown, or is a file of ctx.Files the query quotes.
func fileShown(name string, ctx Context, q query) bool {
	if sameFile(name, ctx.File) || strings.Contains(ctx.Shown, name) {
		return true
	}
	for f, text := range ctx.Files {
		if !sameFile(name, f) {
			continue
		}
		lines := lineSet(text)
		for _, b := range q.blocks {
			if sub := substantive(b); len(sub) > 0 && all(sub, lines) {
				return true
			}
		}
	}
	return false
}

// sameFile: name is file, or its base name, or a tail of its path.
func sameFile(name, file string) bool {
	if file == "" {
		return false
	}
	name, file = strings.TrimPrefix(name, "./"), strings.TrimPrefix(file, "./")
	return name == file || name == path.Base(file) || strings.HasSuffix(file, "/"+name)
}

// duplicates describes each pasted block that repeats the code shown or
// another block.
func duplicates(q query, shown string) []string {
	var out []string
	shownLines := lineSet(shown)
	seen := map[string]int{}
	for i, b := range q.blocks {
		sub := substantive(b)
		if len(sub) == 0 {
			continue
		}
		key := strings.Join(sub, "\n")
		if j, ok := seen[key]; ok {
			out = append(out, fmt.Sprintf("block %d repeats block %d", i+1, j+1))
			continue
		}
		seen[key] = i
		in := 0
		for _, l := range sub {
			if shownLines[l] {
				in++
			}
		}
		if 2*in > len(sub) {
			out = append(out, fmt.Sprintf("block %d: %d of its %d lines are in the code the plugin sends", i+1, in, len(sub)))
		}
	}
	return out
}

// substantive returns a block's trimmed lines of three or more characters
// holding a letter or digit.
func substantive(block string) []string {
	var out []string
	for l := range strings.SplitSeq(block, "\n") {
		l = strings.TrimSpace(l)
		if len([]rune(l)) >= 3 && strings.IndexFunc(l, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			out = append(out, l)
		}
	}
	return out
}

func lineSet(text string) map[string]bool {
	m := map[string]bool{}
	for l := range strings.SplitSeq(text, "\n") {
		m[strings.TrimSpace(l)] = true
	}
	return m
}

func all(lines []string, set map[string]bool) bool {
	for _, l := range lines {
		if !set[l] {
			return false
		}
	}
	return true
}
