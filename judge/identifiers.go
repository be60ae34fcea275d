package judge

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The unknown-identifiers rule is a heuristic for invented APIs. In the
// answer's code it collects the names that are called bare — name( or
// new Name( — and flags those that are:
//
//   - not defined anywhere in the answer's code (func/def/function/class/
//     type/var/let/const declarations, assignments, imports, method
//     definitions),
//   - not mentioned anywhere in the request (system prompt, editor context,
//     history),
//   - not a keyword, builtin or common library name of the file's language
//     (commonNames; Go, Python, JavaScript/TypeScript and Java are known,
//     other languages are not checked).
//
// Names the answer binds count as defined: parameters of the functions,
// lambdas and arrow functions it writes (a nested helper that calls its
// form parameter), loop variables and the names of a tuple assignment.
// Text in string literals is not code: "too few given (min 2)" calls
// nothing.
//
// Qualified calls (x.f(), pkg.F()) are not checked: telling a method of a
// local value from an invented package function needs type information.
// A function defined elsewhere in the file, outside the context the plugin
// sent, is flagged too; the rule's weight is small for that reason.

var (
	bareCall = regexp.MustCompile(`(?:^|[^\w.$@#])([A-Za-z_$][\w$]*)\s*(?:<[\w\s,<>?\[\]]*>)?\s*\(`)
	defined  = []*regexp.Regexp{
		regexp.MustCompile(`\bfunc\s+(?:\([^)]*\)\s*)?(\w+)`),
		regexp.MustCompile(`\b(?:def|class|type|interface|struct|enum|record|function\*?|fn)\s+(\w+)`),
		regexp.MustCompile(`\b(?:var|let|const|val)\s+(\w+)`),
		regexp.MustCompile(`(\w+)\s*(?::=|=[^=>])`),
		regexp.MustCompile(`\bimport\s+(?:static\s+)?(?:[\w.]+\.)?(\w+)`),
		regexp.MustCompile(`\bas\s+(\w+)`),
		regexp.MustCompile(`(?m)^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|async|override|get|set)\s+)*` +
			`(?:[\w<>\[\],.?]+\s+)?(\w+)\s*\([^()]*\)\s*(?::\s*[\w<>\[\]|., ]+)?\s*(?:throws\s+[\w., ]+)?\{\s*$`),
	}
	fromImport = regexp.MustCompile(`\bfrom\s+[\w.]+\s+import\s+\(?([\w, ]+)`)
	wordRe     = regexp.MustCompile(`[A-Za-z_$][\w$]*`)
	// boundLists are lists of names bound at once, every word of the group
	// a name: lambda a, b: …; for k, v in …; a, b = … and k, v := …;
	// (a, b) => … and a => ….
	boundLists = []*regexp.Regexp{
		regexp.MustCompile(`\blambda\b([^:\n]*):`),
		regexp.MustCompile(`\bfor\s+\(?((?:\*?\w+\s*,\s*)*\*?\w+)\)?\s+in\b`),
		regexp.MustCompile(`((?:\w+\s*,\s*)+\w+)\s*(?::=|=[^=>])`),
		regexp.MustCompile(`\(([\w\s,:?]*)\)\s*=>`),
		regexp.MustCompile(`(\w+)\s*=>`),
	}
	// funcHead is the start of a function's parameter list: def f(,
	// func (r T) F[T any](, func(, function f(, fn f(.
	funcHead = regexp.MustCompile(`\b(?:def\s+\w+|func(?:\s*\([^()]*\))?\s*\w*|function\*?\s*\w*|fn\s+\w+)\s*(?:\[[^\]\n]*\])?\s*(?:<[^>\n]*>)?\s*\(`)
	// stringLit are string literals: Python's triple-quoted ones first,
	// then one-line quoted strings and backquoted (Go raw, JavaScript
	// template) ones.
	stringLit = regexp.MustCompile(`(?s:"""(?:.*?)"""|'''(?:.*?)''')|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|` + "`[^`]*`")
)

// parameterNames are the names of the parameters of every function the
// code defines: the first word of each top-level comma-separated part of
// its parameter list (Go's "a, b int", Python's "*args, key: int = 0",
// JavaScript's "cb").
func parameterNames(code string) []string {
	var out []string
	for _, loc := range funcHead.FindAllStringIndex(code, -1) {
		depth, start := 0, loc[1]
	scan:
		for i := loc[1]; i < len(code); i++ {
			switch code[i] {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth == 0 {
					if w := wordRe.FindString(code[start:i]); w != "" {
						out = append(out, w)
					}
					break scan
				}
				depth--
			case ',':
				if depth == 0 {
					if w := wordRe.FindString(code[start:i]); w != "" {
						out = append(out, w)
					}
					start = i + 1
				}
			}
		}
	}
	return out
}

func unknownIdentifiers(s Subject, answer string) (string, bool) {
	lang := normLang(s.Language)
	common, ok := commonNames[lang]
	if !ok {
		return "", false
	}
	code := parseMarkdown(answer).code()
	known := map[string]bool{}
	for _, m := range s.Messages {
		for _, w := range wordRe.FindAllString(m.Content, -1) {
			known[w] = true
		}
	}
	for _, re := range defined {
		for _, m := range re.FindAllStringSubmatch(code, -1) {
			known[m[1]] = true
		}
	}
	for _, re := range append([]*regexp.Regexp{fromImport}, boundLists...) {
		for _, m := range re.FindAllStringSubmatch(code, -1) {
			for _, w := range wordRe.FindAllString(m[1], -1) {
				known[w] = true
			}
		}
	}
	for _, w := range parameterNames(code) {
		known[w] = true
	}
	var unknown []string
	seen := map[string]bool{}
	for _, m := range bareCall.FindAllStringSubmatch(stringLit.ReplaceAllString(code, `""`), -1) {
		name := m[1]
		if known[name] || seen[name] || common[name] || keywords[name] {
			continue
		}
		seen[name] = true
		unknown = append(unknown, name)
	}
	if len(unknown) == 0 {
		return "", false
	}
	sort.Strings(unknown)
	if len(unknown) > 5 {
		unknown = append(unknown[:5], "…")
	}
	return fmt.Sprintf("the answer's code calls %s, found neither in the context nor in %s's common library",
		strings.Join(unknown, ", "), s.Language), true
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// keywords are followed by "(" in some language without being calls.
var keywords = set(`if for while switch catch return func function def class with elif except not and or in
	is lambda yield await async typeof sizeof new synchronized assert print super this self go defer select
	case when match else do try throw throws raise import from export default delete void instanceof let var const
	struct interface map chan range type of`)

var commonNames = map[string]map[string]bool{
	"go": set(`append cap clear close complex copy delete imag len make max min new panic print println real recover
		bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8
		uint16 uint32 uint64 uintptr any comparable main init`),
	"python": set(`abs all any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex
		delattr dict dir divmod enumerate eval exec filter float format frozenset getattr globals hasattr hash help
		hex id input int isinstance issubclass iter len list locals map max memoryview min next object oct open ord
		pow print property range repr reversed round set setattr slice sorted staticmethod str sum super tuple type
		vars zip __import__ Exception BaseException ValueError TypeError KeyError IndexError RuntimeError
		ZeroDivisionError AttributeError NotImplementedError StopIteration AssertionError OSError IOError
		FileNotFoundError PermissionError ImportError ModuleNotFoundError NameError OverflowError ArithmeticError
		LookupError UnicodeDecodeError UnicodeEncodeError TimeoutError ConnectionError RecursionError
		dataclass field namedtuple defaultdict Counter OrderedDict deque partial reduce lru_cache cache wraps
		Optional List Dict Tuple Set Union Callable Iterable Iterator Any TypeVar Generic cast overload
		main setUp tearDown setUpClass tearDownClass fixture parametrize raises approx`),
	"javascript": jsNames,
	"typescript": jsNames,
	"java": set(`String Object Integer Long Double Float Boolean Character Byte Short Math System StringBuilder
		StringBuffer ArrayList LinkedList HashMap LinkedHashMap TreeMap HashSet LinkedHashSet TreeSet ArrayDeque
		PriorityQueue Optional Arrays Collections List Map Set Objects Thread Runnable BigDecimal BigInteger
		Exception RuntimeException IllegalArgumentException IllegalStateException NullPointerException
		UnsupportedOperationException IndexOutOfBoundsException ArithmeticException IOException
		NoSuchElementException ConcurrentModificationException ClassCastException NumberFormatException
		AtomicInteger AtomicLong ReentrantLock ConcurrentHashMap CopyOnWriteArrayList Scanner Random UUID
		assertEquals assertNotEquals assertTrue assertFalse assertNull assertNotNull assertThrows assertArrayEquals
		assertSame assertNotSame assertAll assertDoesNotThrow fail assumeTrue main toString equals hashCode
		compareTo getClass valueOf`),
}

var jsNames = set(`parseInt parseFloat isNaN isFinite Number String Boolean Array Object Symbol BigInt Date Math JSON
	Promise Map Set WeakMap WeakSet WeakRef Error TypeError RangeError SyntaxError ReferenceError EvalError
	AggregateError RegExp Proxy Reflect Intl URL URLSearchParams TextEncoder TextDecoder Buffer Uint8Array
	Int32Array Float64Array ArrayBuffer DataView AbortController Blob FormData Headers Request Response Event
	EventTarget CustomEvent setTimeout clearTimeout setInterval clearInterval setImmediate queueMicrotask
	structuredClone fetch require encodeURIComponent decodeURIComponent encodeURI decodeURI atob btoa alert
	describe it test expect beforeEach afterEach beforeAll afterAll suite jest vi constructor get set
	Record Partial Readonly Pick Omit Exclude Extract NonNullable ReturnType Parameters Awaited Required
	assert strictEqual deepStrictEqual equal ok`)
