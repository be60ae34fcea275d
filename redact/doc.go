// Package redact keeps secrets out of everything dialogfarm sends to a
// model or writes as data.
//
// A Detector finds secrets in text with gitleaks' own detector and its
// default rule set (github.com/zricethezav/gitleaks/v8, built once and
// reused), plus dialogfarm's rules for kinds those defaults miss:
//
//   - bearer-token, basic-auth: "Bearer <token>", "Authorization: Basic …";
//   - dsn-password: the password of scheme://user:password@host (any
//     punctuation; the last @ ends it); url-secret-param: ?token=…&,
//     &password=… and other credential query parameters;
//   - azure-storage-key: AccountKey=/SharedAccessKey= of a connection string;
//   - credential files, found by content: netrc-password (machine … login
//     … password …), pgpass-password (host:port:db:user:password),
//     docker-config-auth ("auth", "identitytoken" of config.json),
//     npmrc-auth (_authToken=, _auth=, _password=); .pypirc and
//     .git-credentials fall to the assignment and URL rules;
//   - secret-assignment: a name that says it holds a secret assigned a
//     literal: quoted in code, JSON, YAML, TOML; unquoted in .env, YAML,
//     .properties, INI, Dockerfile ENV/ARG, --password= flags; in comments
//     (# password: hunter2, // token = …); through a conversion
//     ([]byte("…"), bytes.fromhex('…')). How strong the name is decides
//     what value counts (names.go): a password, token, secret or API key
//     takes any value that is not a placeholder, a reference (${VAR}), a
//     path, a URL, a type, a number, code or plain words; a key, salt,
//     HMAC or signature only key material (32+ hex digits, random base64);
//     a name that names the secret (SECRET_NAME, token_url, password_file,
//     public_key, commit_sha, nextPageToken) nothing;
//   - secret-key-value: <password>…</password>, key="ApiKey" value="…";
//   - pem-body: three or more lines of base64 (a PEM body without its
//     header, a key pasted into YAML), as one secret, unless in a public
//     PEM block (certificate, public key);
//   - high-entropy: any run of 20+ base64/base64url characters, holding an
//     upper-case letter, a lower-case letter and a digit, with 3.5+ bits of
//     entropy per character, whose character classes change like a
//     random string's, not like an identifier's, excluding pure hex
//     (hashes, commit ids), hash encodings ("h1:", "sha512-", "SHA-256="),
//     base64 of text, data URIs and notebook images, URL path segments,
//     values assigned to ids (id, user_id, uuid, slug), function names,
//     and blobs and data files (more than 8 on a line, or 20+ on a quarter
//     of the lines).
//
// The string literals of a line are also joined and scanned as one text
// ("sk_live_" + "…", Python's implicit concatenation, `…${'…'}`), and what
// is found there is reported as pieces that share a Finding.Join.
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
// SFT data holds the same redacted text. It reads UTF-16 and UTF-32 (with
// or without a byte order mark) and text with stray NUL bytes, writes each
// file back in its encoding, and masks secrets in binary files in place.
// A run records the copies in redactions.json: counts per rule and, per
// file, the line, kind and placeholder of each secret, never a secret.
// `dialogfarm redact` makes the same copy of any folder or file.
package redact
