// Package redact keeps secrets out of everything dialogfarm sends to a
// model or writes as data.
//
// A Detector finds secrets in text with gitleaks' own detector and its
// default rule set (github.com/zricethezav/gitleaks/v8, built once and
// reused), plus dialogfarm's rules for kinds those defaults miss:
//
//   - bearer-token: "Bearer <token>" in an Authorization header or anywhere;
//   - basic-auth: "Authorization: Basic <base64>";
//   - dsn-password: the password of scheme://user:password@host;
//   - azure-storage-key: AccountKey=/SharedAccessKey= of a connection string;
//   - secret-assignment: a name holding pass, password, pwd, secret, token,
//     api key, access key, private key, credential or signing key assigned a
//     literal (quoted in code, JSON and YAML; unquoted in .env and YAML), a
//     getenv default, a dict entry; kept when the value is not a placeholder,
//     not a URL or path, not a few words, not an environment variable's
//     name (OPENAI_API_KEY), not code (a call, a selector ending in a comma),
//     and has at least 3 bits of entropy per character;
//   - pem-body: three or more lines of base64 (a PEM body without its
//     header, a key pasted into YAML), as one secret;
//   - high-entropy: any run of 20+ base64/base64url characters, holding an
//     upper-case letter, a lower-case letter and a digit, with 3.5+ bits of
//     entropy per character, whose character classes change like a
//     random string's, not like an identifier's (mean run of one class of
//     at most 2.2 characters), excluding pure hex (hashes, commit ids) and
//     hash encodings such as "h1:" and "sha512-".
//
// A value right after a hash encoding's prefix (go.sum's "h1:", an
// integrity "sha512-") is never a finding, whatever rule matched it.
//
// Findings are mapped to this package's Finding (rule and byte span; the
// secret itself is never copied into it, so it cannot reach a log).
//
// A Redactor replaces each secret with a stable placeholder named after its
// rule and an ordinal, e.g. REDACTED_AWS_ACCESS_TOKEN_1: the same secret gets
// the same placeholder in every file and every text the Redactor sees, and a
// secret once seen is replaced wherever it appears again, even where no rule
// would fire. A multi-line secret keeps its line count (the placeholder is
// followed by the same number of newlines), so line numbers stay valid.
//
// Sanitise makes the sanitised copy of repositories that the editor opens
// instead of the originals, so that the plugin sends, the pool sees and the
// SFT data holds the same redacted text. It writes redactions.json next to
// the copies: counts per rule, never a secret.
package redact
