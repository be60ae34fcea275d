package redact

import (
	"regexp"
	"slices"
	"strings"
)

// Names of this package's own rules (see the package doc).
const (
	ruleBearer      = "bearer-token"
	ruleBasicAuth   = "basic-auth"
	ruleDSN         = "dsn-password"
	ruleURLParam    = "url-secret-param"
	ruleAzure       = "azure-storage-key"
	ruleNetrc       = "netrc-password"
	rulePgpass      = "pgpass-password"
	ruleDockerAuth  = "docker-config-auth"
	ruleNpmrc       = "npmrc-auth"
	ruleAssignment  = "secret-assignment"
	ruleKeyValue    = "secret-key-value"
	rulePEMBody     = "pem-body"
	ruleHighEntropy = "high-entropy"
)

// ownRule is a regular expression whose group "v" is the secret and whose
// optional group "name" the name it is assigned to, kept when keep says
// so.
type ownRule struct {
	id   string
	re   *regexp.Regexp
	keep func(m match) bool
	// keywords, when set, skip the rule on text holding none of them (in
	// lower case).
	keywords []string
}

// match is one match of an ownRule: the name (or ""), the value, what
// follows it on its line (for unquoted values), whether the line is a
// comment and whether the value is quoted.
type match struct {
	name, value, tail      string
	comment, quoted, badge bool
}

// secretKeywords prefilter the assignment rules: each name they look at
// holds one of them.
var secretKeywords = []string{"pass", "pwd", "secret", "token", "key", "credential", "auth", "hmac", "salt", "seed", "sig", "cred"}

// nameRe is a name that may hold a secret (see nameClass for which do).
const nameRe = `[\w.-]*(?:pass|pwd|secret|token|key|credential|auth|hmac|salt|seed|sig|cred)[\w.-]*`

// conversion is a call that turns a literal into a key: []byte("…"),
// bytes.fromhex('…'), Buffer.from("…").
const conversion = `(?:\[\]byte|bytes?|b|str|String|string|Buffer\.from|base64\.\w+|atob|bytearray|(?:bytes\.)?fromhex|hex\.DecodeString|unhexlify|new\s+\w+)\(\s*`

// commentLead is what starts a comment line in the languages and formats
// a repository holds.
const commentLead = `(?:#+|//+|--|;+|\*+|/\*+|<!--|(?i:rem)\b|')`

var (
	ownRules = []ownRule{
		{ruleBearer, regexp.MustCompile(`(?i)\bbearer[ \t]+(?P<v>[A-Za-z0-9._~+/=-]{16,})`), tokenValue, []string{"bearer"}},
		{ruleBasicAuth, regexp.MustCompile(`(?i)authorization["']?\s*[:=,]\s*["']?basic[ \t]+(?P<v>[A-Za-z0-9+/]{12,}={0,2})`), tokenValue, []string{"basic"}},
		// scheme://user:password@host, the password may hold any
		// punctuation but / and quotes (an @ too: the last one ends it).
		{ruleDSN, regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://(?P<name>[^\s:/@'"\x60]{0,64}):(?P<v>[^\s/'"\x60]{3,128})@[^\s'"\x60/@]+`), dsnPassword, []string{"://"}},
		// ?token=…&, &password=…
		{ruleURLParam, regexp.MustCompile(`(?i)[?&;](?P<name>password|passwd|pwd|pass|token|access_token|auth_token|id_token|refresh_token|api_key|apikey|api-key|key|secret|client_secret|sig|signature|x-amz-signature|x-goog-signature)=(?P<v>[^&\s"'\x60#<>]{8,300})`), urlParam, []string{"="}},
		{ruleAzure, regexp.MustCompile(`(?i)(?:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/]{40,100}={0,2})`), notPlaceholderMatch, []string{"accountkey=", "sharedaccesskey="}},
		// .netrc: machine, login and password entries, on one line or
		// several.
		{ruleNetrc, regexp.MustCompile(`(?i)\b(?:machine[ \t]+\S+|default)\s+(?:(?:login|account|port)[ \t]+\S+\s+)*password[ \t]+(?P<v>\S{3,200})`), notPlaceholderMatch, []string{"password"}},
		// .pgpass: host:port:database:user:password
		{rulePgpass, regexp.MustCompile(`(?m)^[^:\s#]+:(?:\d{1,5}|\*):[^:\s]+:[^:\s]+:(?P<v>\S{3,200})[ \t]*\r?$`), notPlaceholderMatch, []string{":"}},
		// Docker's config.json: "auth": base64(user:password), identity
		// and registry tokens.
		{ruleDockerAuth, regexp.MustCompile(`(?i)"(?:auth|identitytoken|registrytoken)"\s*:\s*"(?P<v>[A-Za-z0-9+/=._-]{12,})"`), plausibleRandom, []string{"auth", "token"}},
		// .npmrc: //registry/:_authToken=…, _auth=…, _password=…
		{ruleNpmrc, regexp.MustCompile(`(?im)(?:^|:)[ \t]*_(?:authToken|auth|password)[ \t]*=[ \t]*"?(?P<v>[^\s"]{6,})"?`), notPlaceholderMatch, []string{"_auth", "_password"}},
		// name = "value", name: 'value', "name": "value", ["name"] =
		// "value", 'name' => 'value'; then getenv("NAME", "value")
		{ruleAssignment, regexp.MustCompile(`(?i)(?P<name>` + nameRe + `)["'\x60\]]?\s*(?::=|=>|=|:)\s*(?:` + conversion + `)?[bru]?["'\x60](?P<v>[^"'\x60\s]{6,300})["'\x60]`), assignment, secretKeywords},
		{ruleAssignment, regexp.MustCompile(`(?i)["'](?P<name>` + nameRe + `)["']\s*,\s*["'\x60](?P<v>[^"'\x60\s]{6,300})["'\x60]`), assignment, secretKeywords},
		// NAME=value in .env, name: value in YAML, ENV NAME value in a
		// Dockerfile, # password: value in a comment.
		{ruleAssignment, regexp.MustCompile(`(?im)^[ \t]*(?P<c>` + commentLead + `[ \t]*)?(?:(?:export|env|arg|set|setx|setenv|declare(?:[ \t]+-x)?)[ \t]+)?(?P<name>` + nameRe + `)[ \t]*[=:][ \t]*(?P<v>[^\s"'\x60]{6,300})(?P<tail>[^\n]*)$`), assignment, secretKeywords},
		// # the admin password: value, // old token = value
		{ruleAssignment, regexp.MustCompile(`(?im)^[ \t]*(?P<c>` + commentLead + `)[ \t]*(?:[\w.-]+[ \t]+){1,4}?(?P<name>` + nameRe + `)[ \t]*[=:][ \t]*(?P<v>[^\s"'\x60]{6,300})(?P<tail>[^\n]*)$`), assignment, secretKeywords},
		// --password=value, --token value on a command line
		{ruleAssignment, regexp.MustCompile(`(?i)(?:^|[ \t])--(?P<name>password|passwd|pass|token|api-key|apikey|secret|client-secret|auth-token|access-token)[= ](?P<v>[^\s"'\x60]{6,300})`), assignment, secretKeywords},
		{ruleAssignment, regexp.MustCompile(`(?im)^[ \t]*(?:env|arg)[ \t]+(?P<name>` + nameRe + `)[ \t]+"?(?P<v>[^\s"'\x60=]{6,300})"?(?P<tail>[^\n]*)$`), assignment, secretKeywords},
		// <password>value</password>; key="ApiKey" value="…"
		{ruleKeyValue, regexp.MustCompile(`(?i)<(?P<name>` + nameRe + `)>(?P<v>[^<\s]{6,300})</`), assignment, secretKeywords},
		{ruleKeyValue, regexp.MustCompile(`(?i)(?:key|name)\s*=\s*"(?P<name>` + nameRe + `)"\s+value\s*=\s*"(?P<v>[^"\s]{6,300})"`), assignment, secretKeywords},
	}
	placeholderRe = regexp.MustCompile(`REDACTED_[A-Z0-9_]+_[0-9]+`)
	// placeholderValue is text people write where a secret would go.
	placeholderValue = regexp.MustCompile(`(?i)^(x+|\*+|\.+|-+|_+|#+|0+|1234(5678?)?|changeme|change_me|changeit|password|passwd|secret|token|pass|example\w*|sample\w*|your[_-].*|<.*>|\[.*\]|\$\{.*\}|\$\(.*\)|\{\{.*\}\}|%[sv]|%\(\w+\)s|\$\w+|\$\d|@\w+@|%\w+%|dummy\w*|fake\w*|todo|tbd|none|null|nil|undefined|redacted|true|false|required|optional|hidden|secure|string|str)$`)
	// reference is a value that names or computes the secret instead of
	// holding it.
	reference = regexp.MustCompile(`^(?:\\x[0-9a-fA-F]{2})+$|\$\{|\$\(|\{\{|\}\}|^\$[A-Za-z_]\w*$|^\\\$|/\$[A-Za-z_]|<%|%>|^env:|^secret:|^vault:|^ENC\[|^!|^&|\\x1b|\\033|\\e\[|\\x00`)
	// wordsRe is a few words, such as "bert-base-uncased", "getToken" or
	// "oauth2-secret-token" (in lower case: one word with digits, hunter2,
	// or mixed case, Xml-Pa55-FAKE, is not).
	wordsRe = regexp.MustCompile(`(?i:^_*[a-z]+(?:[-_.:][a-z]+)*_*$)|^[a-z]+\d*(?:[-_.:][a-z]+\d*)+$`)
	// envName is the name of an environment variable, such as OPENAI_API_KEY.
	envName    = regexp.MustCompile(`^_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]*)+$`)
	entropyTok = regexp.MustCompile(`[A-Za-z0-9+/_-]{20,}={0,2}`)
	hexRe      = regexp.MustCompile(`^(?:[0-9a-f]+|[0-9A-F]+)$|^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-`)
	hashPrefix = regexp.MustCompile(`(?i)(?:h1:|sha-?(?:1|224|256|384|512)[-:=]|md5[-:=])$`)
	hashToken  = regexp.MustCompile(`(?i)^sha(?:1|224|256|384|512)-`)
	// badgeURL is an image URL up to its query.
	badgeURL = regexp.MustCompile(`\.(?:svg|png)$`)
	// identifierUse is what follows a name, not a value: a call, an
	// assignment to it, a method call on it, a key.
	identifierUse = regexp.MustCompile(`^(?:\(|\s*(?::=|=[^=>~])|\.[A-Za-z_]\w*\(|["']?:\s)`)
	// fileMagic is the base64 of a file's first bytes: gzip, PNG, JPEG, GIF,
	// zip, PDF, WebAssembly, ELF, PE.
	fileMagic = regexp.MustCompile(`^(?:H4sI|iVBORw0KGgo|/9j/|R0lGOD|UEsDB|JVBER|AGFzbQ|f0VMR|TVqQ)`)
	// mediaValue is a JSON media bundle's key before its value (a notebook's
	// "image/png": "iVBORw0…").
	mediaValue = regexp.MustCompile(`"(?:image|audio|video|font)/[\w.+-]+"\s*:\s*\[?\s*"`)
	// dataURI is what comes before the payload of a data: URI.
	dataURI = regexp.MustCompile(`(?i)data:[\w/+.-]*(?:;[\w=.-]+)*;base64,$`)
	// urlPath is a URL up to its host or a path segment: a document's or
	// a video's id there is no secret (webhook URLs that hold one have
	// named rules).
	urlPath     = regexp.MustCompile(`(?i)\bhttps?://[^\s"'\x60<>?#]*$`)
	ownRuleName = map[string]bool{}
)

func init() {
	for _, r := range ownRules {
		ownRuleName[r.id] = true
	}
	ownRuleName[rulePEMBody] = true
	ownRuleName[ruleHighEntropy] = true
}

func isOwnRule(id string) bool { return ownRuleName[id] }

// notPlaceholder says whether s is neither a placeholder nor a reference
// to a secret kept elsewhere.
func notPlaceholder(s string) bool {
	return !placeholderValue.MatchString(s) && !placeholderRe.MatchString(s) && !reference.MatchString(s)
}

func notPlaceholderMatch(m match) bool { return notPlaceholder(m.value) }

// plausibleRandom keeps a value that is not a placeholder and has at least
// 3 bits of entropy per character.
func plausibleRandom(m match) bool { return notPlaceholder(m.value) && entropy(m.value) >= 3.0 }

// dsnPassword keeps the password of a URL, unless it is a placeholder or
// the URL is a template (user:password@, user:pass@).
func dsnPassword(m match) bool {
	return notPlaceholder(m.value) && !strings.ContainsAny(m.value, "{}") && m.value != m.name && !testPassword[strings.ToLower(m.value)]
}

// testPassword are passwords of examples and tests (nats://derek:foo@).
var testPassword = map[string]bool{"foo": true, "bar": true, "baz": true, "pwd": true, "pw": true, "pass": true,
	"test": true, "demo": true, "guest": true, "admin": true, "user": true, "root": true, "s3cr3t": true, "secret1": true}

// tokenValue keeps a bearer or basic token that is not a placeholder,
// has at least 3 bits of entropy per character and is not words
// (Bearer realm="…", Bearer resource_metadata=…).
func tokenValue(m match) bool {
	return plausibleRandom(m) && !plainWords(strings.TrimRight(m.value, "="))
}

// urlParam keeps a query parameter's value when its name is a credential
// and the value is not a placeholder; a value of a key or signature
// parameter must look random.
func urlParam(m match) bool {
	v := m.value
	if m.badge {
		return false // a status badge's image URL: its token is meant to be seen
	}
	if !notPlaceholder(v) || plainWords(v) {
		return false
	}
	switch strings.ToLower(m.name) {
	case "key", "sig", "signature":
		return randomValue(v)
	}
	return entropy(v) >= 3.0
}

// escapeLen is the length of the escape sequence that s starts with, its
// backslash excluded (x12 of \x12, u00e9 of \u00e9, n of \n).
func escapeLen(s string) int {
	hexes := func(n int) int {
		i := 1
		for i <= n && i < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[i]) >= 0 {
			i++
		}
		return i
	}
	switch s[0] {
	case 'x':
		return hexes(2)
	case 'u':
		return hexes(4)
	case 'U':
		return hexes(8)
	}
	return 1
}

// ownFindings runs this package's rules over text.
func ownFindings(text string) []Finding {
	var out []Finding
	lower := strings.ToLower(text)
	for _, r := range ownRules {
		if r.keywords != nil && !slices.ContainsFunc(r.keywords, func(k string) bool { return strings.Contains(lower, k) }) {
			continue
		}
		vi, ni, ti, ci := r.re.SubexpIndex("v"), r.re.SubexpIndex("name"), r.re.SubexpIndex("tail"), r.re.SubexpIndex("c")
		group := func(sm []int, i int) string {
			if i < 0 || sm[2*i] < 0 {
				return ""
			}
			return text[sm[2*i]:sm[2*i+1]]
		}
		for _, sm := range r.re.FindAllStringSubmatchIndex(text, -1) {
			m := match{name: group(sm, ni), value: group(sm, vi), tail: group(sm, ti), comment: group(sm, ci) != ""}
			start, end := sm[2*vi], sm[2*vi+1]
			m.quoted = start > 0 && strings.IndexByte("\"'`", text[start-1]) >= 0
			m.badge = badgeURL.MatchString(text[max(0, sm[0]-200):sm[0]])
			// A value that runs on into a comment's closing mark.
			for _, close := range []string{"*/", "-->"} {
				if i := strings.Index(m.value, close); i > 0 {
					m.value, end = m.value[:i], start+i
				}
			}
			if r.keep(m) {
				out = append(out, Finding{Rule: r.id, Start: start, End: end})
			}
		}
	}
	out = append(out, pemBodies(text)...)
	for _, m := range entropyTok.FindAllStringIndex(text, -1) {
		if m[0] > 0 && text[m[0]-1] == '\\' { // an escape sequence: \x12MapEntry, \u00e9t
			m[0] = min(m[1], m[0]+escapeLen(text[m[0]:m[1]]))
		}
		s := strings.TrimRight(text[m[0]:m[1]], "=")
		if identifierUse.MatchString(text[m[1]:min(len(text), m[1]+40)]) || fileMagic.MatchString(s) {
			continue // a function's or a variable's name; an embedded file
		}
		before := text[max(0, m[0]-80):m[0]]
		if !hashPrefix.MatchString(text[max(0, m[0]-9):m[0]]) && !hashToken.MatchString(s) &&
			!dataURI.MatchString(before) && !urlPath.MatchString(before) && randomLooking(s) && !idAssigned(before) &&
			!mediaValue.MatchString(text[strings.LastIndexByte(text[:m[0]], '\n')+1:m[0]]) {
			out = append(out, Finding{Rule: ruleHighEntropy, Start: m[0], End: m[0] + len(s)})
		}
	}
	return out
}
