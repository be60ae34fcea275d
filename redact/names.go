package redact

import (
	"regexp"
	"strings"
	"unicode"
)

// How strongly a name says that its value is a secret.
type nameStrength int

const (
	// notSecret: the name holds a keyword but names something else: the
	// secret's name, path, URL, length, a public key, a hash (SECRET_NAME,
	// token_url, password_file, public_key, commit_sha).
	notSecret nameStrength = iota
	// weakName: the keyword is part of a longer word (tokenizer, keyboard,
	// passenger): only a random-looking value counts.
	weakName
	// keyName: a key, salt, seed, HMAC or signature (SIGNING_KEY,
	// hmac_secret, webhook_key): a value that looks like key material
	// counts (hex of 32+ digits, random base64).
	keyName
	// strongName: a password, secret, token, API key or credential: any
	// value that is not a placeholder, a reference, a path, a URL, code or
	// a plain word counts.
	strongName
)

var (
	strongWords = map[string]bool{"password": true, "passwd": true, "pwd": true, "pass": true, "passphrase": true,
		"passcode": true, "secret": true, "secrets": true, "token": true, "tokens": true, "apikey": true,
		"credential": true, "credentials": true, "creds": true, "cred": true, "pat": true, "passwort": true, "contrasena": true}
	// strongPairs are two-word names that are as strong as one of
	// strongWords: api key, access key, private key, …
	strongPairs = map[string]bool{"api key": true, "access key": true, "private key": true, "secret key": true,
		"client secret": true, "auth key": true, "account key": true, "master key": true, "encryption key": true,
		"signing key": true, "app key": true, "license key": true, "service key": true, "admin key": true, "root password": true}
	keyWords = map[string]bool{"key": true, "keys": true, "hmac": true, "salt": true, "seed": true, "signing": true,
		"signature": true, "sig": true, "cipher": true, "encryption": true, "encrypt": true, "aes": true, "jwt": true,
		"webhook": true, "session": true, "cookie": true, "auth": true, "authorization": true, "priv": true, "private": true}
	// nonValueWords, as a name's last word, say its value is not the
	// secret but something about it.
	nonValueWords = map[string]bool{"name": true, "names": true, "id": true, "ids": true, "path": true, "paths": true,
		"file": true, "files": true, "filename": true, "dir": true, "directory": true, "env": true, "var": true,
		"variable": true, "field": true, "ref": true, "arn": true, "url": true, "uri": true, "endpoint": true,
		"host": true, "header": true, "param": true, "prefix": true, "suffix": true, "length": true, "len": true,
		"size": true, "type": true, "kind": true, "label": true, "hint": true, "policy": true, "regex": true,
		"pattern": true, "min": true, "max": true, "count": true, "ttl": true, "expiry": true, "expires": true,
		"expiration": true, "lifetime": true, "timeout": true, "version": true, "enabled": true, "required": true,
		"format": true, "mode": true, "provider": true, "store": true, "manager": true, "description": true,
		"placeholder": true, "message": true, "msg": true, "error": true, "text": true, "title": true, "prompt": true,
		"location": true, "source": true, "method": true, "scheme": true, "algorithm": true, "alg": true, "usage": true,
		"user": true, "username": true, "login": true, "email": true, "index": true, "idx": true, "column": true,
		"attr": true, "attribute": true, "property": true, "option": true, "flag": true, "input": true, "class": true,
		"style": true, "icon": true, "policy_arn": true, "command": true, "cmd": true, "script": true, "handler": true,
		"callback": true, "func": true, "fn": true, "option_name": true, "slug": true, "tag": true, "uuid": true}
	// nonSecretWords anywhere in a name say it is not a secret: a public
	// key, a hash or digest, an identifier.
	nonSecretWords = map[string]bool{"public": true, "pub": true, "publishable": true, "sha": true, "sha1": true,
		"sha256": true, "sha512": true, "hash": true, "hashed": true, "digest": true, "checksum": true, "etag": true,
		"commit": true, "fingerprint": true, "integrity": true, "cache": true, "idempotency": true, "primary": true,
		"foreign": true, "sort": true, "partition": true, "shard": true, "lookup": true, "map": true, "dict": true,
		"i18n": true, "translation": true, "keyboard": true, "hotkey": true, "shortcut": true, "keycode": true,
		"keypress": true, "keydown": true, "keyup": true, "monkey": true, "turkey": true, "reset": true,
		"forgot": true, "confirm": true, "confirmation": true, "nonce": true, "csrf": true,
		// tokens that are cursors or ids: progressToken, nextPageToken
		"page": true, "next": true, "continuation": true, "cancellation": true, "progress": true, "sync": true,
		"cursor": true, "pagination": true, "lexer": true, "parser": true}
	camelBoundary = regexp.MustCompile(`([a-z0-9])([A-Z])`)
)

// nameWords splits a name into lower-case words: DB_PASSWORD, dbPassword,
// db.password and db-password all give [db password].
func nameWords(name string) []string {
	name = camelBoundary.ReplaceAllString(name, "$1 $2")
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// nameClass says how strongly name says its value is a secret.
func nameClass(name string) nameStrength {
	w := nameWords(name)
	if len(w) == 0 {
		return notSecret
	}
	if n := len(w); n >= 3 && w[n-1] == "id" && w[n-2] == "key" && (w[n-3] == "private" || w[n-3] == "secret") {
		return keyName // a service account's private_key_id
	}
	if nonValueWords[w[len(w)-1]] && len(w) > 1 {
		return notSecret
	}
	for _, x := range w {
		if nonSecretWords[x] {
			return notSecret
		}
	}
	for i, x := range w {
		if strongWords[x] || (i > 0 && strongPairs[w[i-1]+" "+x]) {
			return strongName
		}
	}
	// apikey, accesskey, secretkey written as one word.
	joined := strings.Join(w, "")
	for p := range strongPairs {
		if strings.Contains(joined, strings.ReplaceAll(p, " ", "")) {
			return strongName
		}
	}
	for _, x := range w {
		if keyWords[x] {
			return keyName
		}
	}
	return weakName
}

var (
	// typeName is a type written where a value would be (password: str,
	// token: bytes32, secret: Option<String>).
	typeName = regexp.MustCompile(`(?i)^(?:u?int|float|bytes?|string|str|bool|boolean|char|number|secretstr|secretbytes|optional|option|any|object)\d*[?!]?$`)
	// codeLike is a value that is an expression: a call, a field, an index,
	// an operator.
	codeLike = regexp.MustCompile(`^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+[,;]?$|[(\[]|[,;)]$|^&[A-Za-z]|^\*[A-Za-z]|^!|[{}]$`)
	// pathLike is a file path or a secret's name in a store
	// (prod/db/password, ./keys/id_rsa, ~/.ssh/key, C:\keys\a.pem).
	pathLike = regexp.MustCompile(`^(?:~|\.{1,2})?/|^[A-Za-z]:\\|^[\w.-]+(?:/[\w.-]+)+/?$|\.(?:pem|key|crt|cer|p12|pfx|json|ya?ml|txt|env|conf|cfg|ini|toml|gpg|asc|jks|keystore)$`)
	flagLike = regexp.MustCompile(`^--?[A-Za-z][\w-]*,?$`)
	// glueCall is code between two literals, matched as if it were one:
	// "hashed-password: "+string(conf)+"…".
	glueCall   = regexp.MustCompile(`^\+?[A-Za-z_][\w.]*\([^)]*\)\+?$`)
	numberLike = regexp.MustCompile(`^[-+]?\d+(?:\.\d+)?(?:e\d+)?[a-zA-Z]{0,3}$|^0x[0-9a-fA-F]{1,16}$`)
	hexSecret  = regexp.MustCompile(`^(?:0x)?[0-9a-fA-F]{32,}$`)
)

// assignment keeps the value assigned to a secret-looking name (see
// nameClass and the package doc).
func assignment(m match) bool {
	v := m.value
	if !m.comment && m.tail != "" && !tailIsComment(m.tail) {
		return false
	}
	if m.comment && len(v) > 0 && strings.ContainsAny(v[len(v)-1:], ".,;") {
		v = v[:len(v)-1] // the end of a sentence
	}
	if !m.quoted && codeLike.MatchString(v) || m.comment && strings.ContainsAny(v, "<>*") || glueCall.MatchString(v) {
		return false // code; grammar in a comment (token = 1*<any CHAR>, token = 1*tchar)
	}
	switch nameClass(m.name) {
	case strongName:
		return plausibleSecret(v)
	case keyName:
		return plausibleSecret(v) && randomValue(v)
	case weakName:
		return plausibleSecret(v) && randomLooking(v)
	}
	return false
}

// tailIsComment says whether what follows an unquoted value on its line
// is nothing but a comment.
func tailIsComment(tail string) bool {
	t := strings.TrimSpace(tail)
	return t == "" || (tail[0] == ' ' || tail[0] == '\t') && (strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") || strings.HasPrefix(t, ";"))
}

// plausibleSecret says whether v, assigned to a name that says it is a
// secret, looks like one: not a placeholder, reference, URL, path, type,
// number, command-line flag, environment variable name or plain words,
// and not too short. (An unquoted value must not be code either: see
// assignment.)
func plausibleSecret(v string) bool {
	switch {
	case len(v) < 6, !notPlaceholder(v), strings.Contains(v, "://"), pathLike.MatchString(v), typeName.MatchString(v),
		numberLike.MatchString(v), strings.HasPrefix(v, "urn:"), flagLike.MatchString(v), envName.MatchString(v), plainWords(v):
		return false
	}
	return entropy(v) >= 2.5
}

// plainWords says whether v is a few words (bert-base-uncased,
// getToken), not a random run of letters (DPYvPATVLPoDgHamrNnIf).
func plainWords(v string) bool {
	return wordsRe.MatchString(v) && !(len(v) >= 16 && hasUpperAndLower(v) && entropy(v) >= 3.5 && !identifierLike(v))
}

// randomValue says whether v looks like key material: 32+ hex digits, or
// a random-looking base64 string.
func randomValue(v string) bool {
	if hexSecret.MatchString(v) {
		return entropy(strings.TrimPrefix(v, "0x")) >= 3.0
	}
	return randomLooking(strings.TrimRight(v, "="))
}

// idName is the last part of an assignment ending where a value starts:
// `id: "`, `"requestId" = '`, `uuid=`.
var idName = regexp.MustCompile(`([\w.-]+)["'\x60]?\s*(?::=|=>|=|:)\s*["'\x60]?$`)

// idAssigned says whether the text before a value ends by assigning it to
// an identifier's name (id, user_id, requestId, uuid, slug, nonce…): the
// high-entropy rule leaves such values alone (nanoid or uuid-like test
// ids).
func idAssigned(before string) bool {
	m := idName.FindStringSubmatch(before)
	if m == nil {
		return false
	}
	w := nameWords(m[1])
	if len(w) == 0 {
		return false
	}
	switch w[len(w)-1] {
	case "id", "ids", "uuid", "guid", "uid", "nanoid", "slug", "nonce", "etag", "hash", "sha", "digest", "checksum",
		"ref", "rev", "revision", "commit", "version", "key":
		return nameClass(m[1]) != strongName
	}
	return false
}
