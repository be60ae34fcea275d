package redact

import (
	"strings"
	"testing"
)

// findCase is a text and the values that must be found in it (none: the
// text holds no secret).
type findCase struct {
	name, text string
	want       []string
}

func checkFind(t *testing.T, cases []findCase) {
	t.Helper()
	d := testDetector(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			joined := map[int]string{}
			for _, f := range d.Find(c.text) {
				if f.Join != 0 {
					if joined[f.Join] == "" {
						got = append(got, "")
					}
					joined[f.Join] += c.text[f.Start:f.End]
					continue
				}
				got = append(got, c.text[f.Start:f.End])
			}
			j := 0
			for i := range got {
				if got[i] == "" { // a split secret, as joined
					j++
					for _, v := range joined {
						if strings.Contains(strings.Join(c.want, "\x00"), v) {
							got[i] = v
						}
					}
				}
			}
			if strings.Join(got, "\x00") != strings.Join(c.want, "\x00") {
				t.Errorf("found %q, want %q", got, c.want)
			}
		})
	}
}

// TestIssue39Probes: the 9 kinds of secret that survived redaction in
// issue 39's probe are found, and its 3 false positives are not.
func TestIssue39Probes(t *testing.T) {
	checkFind(t, []findCase{
		{".netrc password", "machine api.example.com login alice password Xk9#mP2$qLw7\n", []string{"Xk9#mP2$qLw7"}},
		{"stripe split", `const key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dcFAKE";`, []string{"sk_live_4eC39HqLyjWDarjtT1zdp7dcFAKE"}},
		{"github split", `tok = 'ghp_' + 'sMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8'`, []string{"ghp_sMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8"}},
		{"yaml password with # and $", "db:\n  password: Tr0ub4#dor$3xQ\n", []string{"Tr0ub4#dor$3xQ"}},
		{"dockerfile ENV URL with &", "ENV DATABASE_URL=postgres://app:K9&x!mQ2z@db:5432/app?sslmode=require&connect_timeout=10\n", []string{"K9&x!mQ2z"}},
		{"password in a comment", "# password: hunter2\n", []string{"hunter2"}},
		{"unnamed 64-hex signing key", `SIGNING_KEY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"`, []string{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}},
		// (UTF-16 and NUL files: TestSanitiseOddFiles)
		{"png data URI", `<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">`, nil},
		{"data URI of random bytes", `<img src="data:image/png;base64,KXK7BE2W3yhxugNMld4ncLkCS5TdJm+4AUqT3CVutwBJktskbbb/SJHaI2y1/keQ2SJrtP1Gj9gharP8">`, nil},
		{"nanoid test id", `  const id = "V1StGXR8_Z5jdHi6B-myT"`, nil},
		{"name of a secret", `SECRET_NAME = "prod/db/password"`, nil},
	})
}

// TestCredentialFiles: one case per credential file format.
func TestCredentialFiles(t *testing.T) {
	checkFind(t, []findCase{
		{".netrc on several lines", "machine git.example.com\n  login bob\n  password hunter2#x\n", []string{"hunter2#x"}},
		{".pgpass", "# host:port:db:user:password\ndb.example.com:5432:orders:app:Sup3r$ecret&x\n", []string{"Sup3r$ecret&x"}},
		{".git-credentials", "https://bob:pl41n-Passw0rd-x@gitlab.example.com\n", []string{"pl41n-Passw0rd-x"}},
		{"docker config.json auth", `{"auths": {"registry.example.com": {"auth": "YWxpY2U6U3VwM3IkZWNyZXQ="}}}`, []string{"YWxpY2U6U3VwM3IkZWNyZXQ="}},
		{"docker identitytoken", `{"auths": {"ghcr.io": {"auth": "", "identitytoken": "Zk8rT2xWq9mN4bV7cX1zL5pR3sD6fG0h"}}}`, []string{"Zk8rT2xWq9mN4bV7cX1zL5pR3sD6fG0h"}},
		{".npmrc _authToken", "//npm.example.com/:_authToken=Zk8rT2xWq9mN4bV7cX1zL5pR3sD6fG0h\n", []string{"Zk8rT2xWq9mN4bV7cX1zL5pR3sD6fG0h"}},
		{".npmrc _auth", "_auth = Ym9iOmh1bnRlcjJGQUtF\n", []string{"Ym9iOmh1bnRlcjJGQUtF"}},
		{".npmrc _password", "//npm.example.com/:_password=RmFrZVBhc3N3MHJkIQ==\n", []string{"RmFrZVBhc3N3MHJkIQ=="}},
		{".npmrc token from the environment", "//npm.example.com/:_authToken=${NPM_TOKEN}\n", nil},
		{".pypirc", "[pypi]\nusername = alice\npassword = Xk9#mP2$qLw7\n", []string{"Xk9#mP2$qLw7"}},
		{"url without a user", "REDIS_URL=redis://:r3d1s@pass@cache:6379/0\n", []string{"r3d1s@pass"}},
		{"url query token", "https://api.example.com/v1/report?user=bob&token=Zq8Xr2Lm4Np6Tv1Wy3Ks&format=json", []string{"Zq8Xr2Lm4Np6Tv1Wy3Ks"}},
	})
}

// TestValuesAndComments: punctuation, quoting, Dockerfiles, comments and
// key material.
func TestValuesAndComments(t *testing.T) {
	checkFind(t, []findCase{
		{"quoted yaml with # and $", `  password: "a#b$c!d%e^x9"`, []string{"a#b$c!d%e^x9"}},
		{"unquoted yaml then a comment", "  admin_password: x$y#z&w@42  # rotated\n", []string{"x$y#z&w@42"}},
		{"env reference", "  password: ${DB_PASSWORD}\n", nil},
		{"dockerfile ENV name value", "ENV API_TOKEN DPYvPATVLPoDgHamrNnIfPBYNgCPFAKE\n", []string{"DPYvPATVLPoDgHamrNnIfPBYNgCPFAKE"}},
		{"comment with words before the name", "-- admin password: S3cret!Adm1n\n", []string{"S3cret!Adm1n"}},
		{"go comment", "// token = 9f8e7d6c5b4a39281706fedcba98765x\n", []string{"9f8e7d6c5b4a39281706fedcba98765x"}},
		{"block comment", "/* api_key: Zk8rT2xWq9mN4bV7cX1zL5pR3sD6fG0h */\n", []string{"Zk8rT2xWq9mN4bV7cX1zL5pR3sD6fG0h"}},
		{"command-line flag", "mysql -u root --password=Mysq1-R00t app\n", []string{"Mysq1-R00t"}},
		{"byte conversion", `var signingKey = []byte("6003dfed040770f1e209d72eb282e100f7d3cdbd8895b9f1a13ac4eb036d5244")`, []string{"6003dfed040770f1e209d72eb282e100f7d3cdbd8895b9f1a13ac4eb036d5244"}},
		{"hmac hex", `WEBHOOK_HMAC = '3c1f0e2a9b7d4c6e8f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4'`, []string{"3c1f0e2a9b7d4c6e8f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4"}},
		{"connection string", `"Server=db;Database=app;User Id=sa;Password=C0nn$tr-x;"`, []string{"C0nn$tr-x;"}}, // gitleaks' generic rule, with the ;
		{"type annotation", "    password: str\n", nil},
		{"code value", "    Password: cfg.Password,\n", nil},
		{"flag in prose", "needs a token: `--token`, or one generated\n", nil},
		{"hex constant", "\tFS_IOC_REMOVE_ENCRYPTION_KEY = 0xc0406618\n", nil},
		{"cursor token", `Meta: mcp.Meta{"progressToken": "abc123"},`, nil},
		{"bearer challenge", `wantHeader: "Bearer resource_metadata=\"https://example.com/resource-metadata\"",`, nil},
		{"test url password", `nats.Connect(fmt.Sprintf("nats://derek:foo@%s", hostPort))`, nil},
		{"url password same as user", `natsConnect(t, "nats://user1:user1@127.0.0.1:4222")`, nil},
		{"code between literals", `[]byte("auth: password\nhashed-password: "+string(conf)+"\n")`, nil},
		{"grammar in a comment", "// token = 1*tchar\n", nil},
		{"magic with a NUL", `const privateKeyAuthMagic = "openssh-key-v1\x00"`, nil},
		{"words with a digit", `AccessToken: "oauth2-secret-token",`, nil},
		{"generic rule on an identifier", "\tpk1.Keytype = KeyAlgoED25519\n\tcase KeyAlgoED25519:\n", nil},
		{"generic rule on a number", `{token.FLOAT, "-01234567890.98e-10"},`, nil},
		{"identifier after an escape", `"\x12MapInt32Int64Entry\x12\x10\n" +`, nil},
		{"escaped bytes", `defaultPassword = "\x01\x02\x03\x04"`, nil},
		{"constant", "\topts.LeafNode.Password = _EMPTY_\n", nil},
		{"gitleaks generic on code", "\ta.Operator.SigningKeys = oa.v1NatsOperator.SigningKeys\n", nil},
		{"basic auth of user:password", `curl -H 'Authorization: Basic YWxpY2U6aHVudGVyMg==' https://x`, []string{"YWxpY2U6aHVudGVyMg=="}},
	})
}

// TestFewerFalsePositives: ordinary text the rules used to flag, or could.
func TestFewerFalsePositives(t *testing.T) {
	checkFind(t, []findCase{
		{"uuid test id", `	requestId: "3f2a9c4e-1b7d-4a0f-8e5c-4b3a2d1e0f9a",`, nil},
		{"nanoid user id", `user_id = "Uakgb_J5m9g-0JDMbcJqLJ"`, nil},
		{"env var name", `api_key_env: OPENAI_API_KEY`, nil},
		{"secret path", `token_file: /run/secrets/gh_token`, nil},
		{"package-lock integrity", `"integrity": "sha512-Sv0vmgtV8TmHgxYNzRBB4QRt6Fcw0Hq9mIzoDi0YjGbwLDJkSzNPaGcZGYp1n9tAY4k8vYfg2QpfQHXnVMXuSQ=="`, nil},
		{"yarn.lock integrity", `  integrity sha1-HtFUpI2fGlSMnyTAfdLZpk7k0Sk=`, nil},
		{"go.sum", `github.com/zricethezav/gitleaks/v8 v8.30.1 h1:JAJrlDhOyQqOt0a1eg4cbIZ1Kc7+vmkCigAltpwQpVA=`, nil},
		{"git sha", `commit: 3f2a9c4e1b7d8a0f6e5c4b3a2d1e0f9a8b7c6d5e`, nil},
		{"digest header", `expected:  "SHA-256=IdgP4UYMGt47rgecOqFoLrd24AXukHf5-SVzqQ5Psg8=",`, nil},
		{"docs url id", `// https://docs.google.com/document/d/12HVmFxYj5Jc-eJr5OmWsa2bqTJsbgGLKI6ZIyx0_wpA`, nil},
		{"identifier", `func TestTransportResPattern_c0h1d0t0(t *testing.T) {}`, nil},
		{"camel identifier", `// the held copy's sequence (mqttQoS2DeliveryMsgId).`, nil},
		{"generated identifier", `return fileDescriptor_3a17e2c63b2b3424, []int{0}`, nil},
		{"base64 of text", `IHRoZSBxdWljayBicm93biBmb3gganVtcHM=`, nil},
		{"base64 of a sentence", `UXVpeiA0MjogSnVtcCBvdmVyIDcgbGF6eSBkb2dzPyBZZXMsIDkgdGltZXMh`, nil},
		{"arn of a secret", `DB_PASSWORD_SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod-db-AbCdEf"`, nil},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYD54V/vp+54P9DXarYqx4MPcm+HK\nRIQzNasYSoRQHQ/6S6Ps8tpMcT+KvIIC8W/e9k0W7Cm72M1P9jU7SLf/vg==\n-----END PUBLIC KEY-----\n", nil},
		{"notebook image", `      "image/png": "iVBORw0KGgoAAAANSUhEUgAACRkAAAISCAYAAABC/FoMAAAABHNCSVQICAgIfAhkiAAAAAlwSFlz\nAAAWJQAAFiUBSVIk8AAAIABJREFUeJzs3Xl4lNX5//H3LJlJMtkXsgEBQgirbEFEVBBZq1ZZlF+t\nstYuKLZWv/1edSlotbbflmrVim1RQG1rrYCgIKuggAKybwoJJEFCEpJAQvZkMs/vD8xIyEJWhsDn\ndV1chuec58w9Mw5zcp77uY/JMAwDERERERERERERERERERERERERERERERERERERERERERER\n"`, nil},
	})
}

// TestCredentialFileRules: the credential-file rules find their values on
// their own (gitleaks' generic rule often finds them too, so Find alone
// would not show a rule missing).
func TestCredentialFileRules(t *testing.T) {
	cases := []struct{ rule, text, want string }{
		{ruleNetrc, "machine h.example.com login u password pa55-w0rd\n", "pa55-w0rd"},
		{rulePgpass, "h.example.com:5432:db:u:pa55-w0rd\n", "pa55-w0rd"},
		{ruleDockerAuth, `{"auths": {"r.example.com": {"auth": "YWxpY2U6aHVudGVyMg=="}}}`, "YWxpY2U6aHVudGVyMg=="},
		{ruleDockerAuth, `{"identitytoken": "Zk8rT2xWq9mN4bV7cX1zL5pR3sD6fG0h"}`, "Zk8rT2xWq9mN4bV7cX1zL5pR3sD6fG0h"},
		{ruleNpmrc, "//r.example.com/:_authToken=abcdef12-3456-7890-abcd-ef1234567890\n", "abcdef12-3456-7890-abcd-ef1234567890"},
		{ruleNpmrc, "_auth=Ym9iOmh1bnRlcjI=\n", "Ym9iOmh1bnRlcjI="},
		{ruleNpmrc, "//npm.example.com/:_password=aHVudGVyMkZBS0U=\n", "aHVudGVyMkZBS0U="},
		{ruleDSN, "https://bob:pl41n-Passw0rd@gitlab.example.com\n", "pl41n-Passw0rd"},
		{ruleURLParam, "https://x.example.com/a?user=b&token=Zq8Xr2Lm4Np6Tv1Wy3Ks&f=1", "Zq8Xr2Lm4Np6Tv1Wy3Ks"},
	}
	for _, c := range cases {
		found := false
		for _, f := range ownFindings(c.text) {
			found = found || f.Rule == c.rule && c.text[f.Start:f.End] == c.want
		}
		if !found {
			t.Errorf("%s does not find %q in %q", c.rule, c.want, c.text)
		}
	}
}
