package pool

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Which variable may be sent as whose key.
//
// A member sends the value of the variable its APIKeyEnv names as a bearer
// token to the host of its BaseURL. So that a config file, or environment
// variables that override it, cannot send some other secret of the user's
// (a cloud credential, a CI token) or a plain variable (HOME) to a host, a
// member's APIKeyEnv must name an API credential of that host:
//
//  1. The name looks like a credential: its last word (the words are split
//     by "_") is KEY, APIKEY, TOKEN or SECRET, as in OPENAI_API_KEY, HF_TOKEN,
//     VLLM_APIKEY or MY_LLM_SECRET. HOME, PATH, USER, SHELL or
//     GOOGLE_APPLICATION_CREDENTIALS are not.
//  2. It is not a well-known credential of a service other than the host's
//     (WellKnownKeys): a model provider's key goes only to that provider's
//     hosts (OPENAI_API_KEY to *.openai.com, HF_TOKEN to *.huggingface.co),
//     and the credentials of clouds, code hosts and CI (AWS_*, AZURE_*,
//     GITHUB_TOKEN, NPM_TOKEN, …) go to no model host but their own model
//     service, if they have one (GITHUB_TOKEN to GitHub Models, AZURE_*KEY
//     to Azure OpenAI).
//
// A key is never sent over plain http to a host other than loopback
// (localhost, 127.0.0.0/8, ::1): it would cross the network in clear.
//
// A member whose config says AllowKeyEnv or AllowInsecure is exempt from
// the first two rules or the third; the CLI sets them from the config file
// only, never from environment variables.

// keyWords are the last words of a credential-looking variable name.
var keyWord = regexp.MustCompile(`(^|_)(KEY|APIKEY|TOKEN|SECRET)$`)

// KeyOwner is a well-known credential: its variable names, and the hosts
// (a host or any host under it) it may be sent to; no hosts means none.
type KeyOwner struct {
	Service string
	// Names are variable names; a name ending in * stands for every
	// variable with that prefix.
	Names []string
	Hosts []string
}

// WellKnownKeys are the credentials rule 2 knows, of model providers and
// of other services.
func WellKnownKeys() []KeyOwner {
	return []KeyOwner{
		{"OpenAI", []string{"OPENAI_API_KEY", "OPENAI_KEY"}, []string{"openai.com"}},
		{"Anthropic", []string{"ANTHROPIC_API_KEY", "CLAUDE_API_KEY"}, []string{"anthropic.com"}},
		{"Google Gemini", []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"}, []string{"googleapis.com"}},
		{"Mistral", []string{"MISTRAL_API_KEY"}, []string{"mistral.ai"}},
		{"Groq", []string{"GROQ_API_KEY"}, []string{"groq.com"}},
		{"Together", []string{"TOGETHER_API_KEY", "TOGETHERAI_API_KEY"}, []string{"together.xyz", "together.ai"}},
		{"DeepSeek", []string{"DEEPSEEK_API_KEY"}, []string{"deepseek.com"}},
		{"OpenRouter", []string{"OPENROUTER_API_KEY"}, []string{"openrouter.ai"}},
		{"Fireworks", []string{"FIREWORKS_API_KEY"}, []string{"fireworks.ai"}},
		{"xAI", []string{"XAI_API_KEY"}, []string{"x.ai"}},
		{"Cerebras", []string{"CEREBRAS_API_KEY"}, []string{"cerebras.ai"}},
		{"Perplexity", []string{"PERPLEXITY_API_KEY", "PPLX_API_KEY"}, []string{"perplexity.ai"}},
		{"Cohere", []string{"COHERE_API_KEY", "CO_API_KEY"}, []string{"cohere.com", "cohere.ai"}},
		{"Hugging Face", []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_API_KEY", "HUGGINGFACEHUB_API_TOKEN"}, []string{"huggingface.co", "hf.space"}},
		{"NVIDIA", []string{"NVIDIA_API_KEY", "NGC_API_KEY"}, []string{"nvidia.com"}},
		{"Alibaba DashScope", []string{"DASHSCOPE_API_KEY"}, []string{"aliyuncs.com"}},
		{"Moonshot", []string{"MOONSHOT_API_KEY"}, []string{"moonshot.cn", "moonshot.ai"}},
		{"Azure OpenAI", []string{"AZURE_OPENAI_API_KEY", "AZURE_OPENAI_KEY", "AZURE_AI_API_KEY", "AZURE_INFERENCE_CREDENTIAL"},
			[]string{"openai.azure.com", "cognitiveservices.azure.com", "services.ai.azure.com", "inference.ai.azure.com"}},
		{"Azure", []string{"AZURE_*"}, nil},
		{"Amazon Bedrock", []string{"AWS_BEARER_TOKEN_BEDROCK"}, []string{"amazonaws.com"}},
		{"AWS", []string{"AWS_*"}, nil},
		{"Google Cloud", []string{"GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_*", "GCP_*", "GCLOUD_*"}, nil},
		{"GitHub", []string{"GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT", "GH_ENTERPRISE_TOKEN", "GITHUB_*"}, []string{"models.github.ai", "models.inference.ai.azure.com"}},
		{"GitLab", []string{"GITLAB_*", "CI_JOB_TOKEN"}, nil},
		{"package registries", []string{"NPM_TOKEN", "NODE_AUTH_TOKEN", "PYPI_TOKEN", "PYPI_API_TOKEN", "TWINE_PASSWORD", "CARGO_REGISTRY_TOKEN", "NUGET_API_KEY", "GEM_HOST_API_KEY"}, nil},
		{"Docker", []string{"DOCKER_*"}, nil},
		{"cloud platforms", []string{"DIGITALOCEAN_*", "CLOUDFLARE_*", "HEROKU_API_KEY", "VERCEL_TOKEN", "NETLIFY_AUTH_TOKEN", "FLY_API_TOKEN", "VAULT_TOKEN", "TF_TOKEN_*", "ARM_*"}, nil},
		{"messaging and payments", []string{"SLACK_*", "STRIPE_*", "TWILIO_*", "SENDGRID_API_KEY", "DISCORD_*", "TELEGRAM_*"}, nil},
		{"dialogfarm", []string{"DIALOGFARM_TOKEN", "DIALOGFARM_NATS_*"}, nil},
	}
}

// owner is the well-known credential name is, if any. An exact name wins
// over a prefix (AZURE_OPENAI_API_KEY over AZURE_*).
func owner(name string) (KeyOwner, bool) {
	known := WellKnownKeys()
	for _, o := range known {
		if slices.Contains(o.Names, name) {
			return o, true
		}
	}
	for _, o := range known {
		for _, n := range o.Names {
			if p, ok := strings.CutSuffix(n, "*"); ok && strings.HasPrefix(name, p) {
				return o, true
			}
		}
	}
	return KeyOwner{}, false
}

// ErrKeyPolicy marks a member whose key may not be sent as configured.
var ErrKeyPolicy = errors.New("key refused")

// CheckKeyEnv reports whether the variable name may be sent as the key of
// baseURL (rules 1 and 2 above).
func CheckKeyEnv(name, baseURL string) error {
	if name == "" {
		return nil
	}
	host := hostOf(baseURL)
	if !keyWord.MatchString(strings.ToUpper(name)) {
		return fmt.Errorf("%w: api_key_env %s does not name an API credential (want a name ending in _API_KEY, _KEY, _TOKEN or _SECRET)", ErrKeyPolicy, name)
	}
	o, ok := owner(strings.ToUpper(name))
	if !ok {
		return nil
	}
	for _, h := range o.Hosts {
		if host == h || strings.HasSuffix(host, "."+h) {
			return nil
		}
	}
	if len(o.Hosts) == 0 {
		return fmt.Errorf("%w: api_key_env %s is a credential of %s, not a model key, and is sent to no model host", ErrKeyPolicy, name, o.Service)
	}
	return fmt.Errorf("%w: api_key_env %s is a key of %s, sent only to %s, not to %s", ErrKeyPolicy, name, o.Service,
		strings.Join(o.Hosts, " or "), host)
}

// CheckTransport reports whether a key may be sent to baseURL: over https,
// or over http to a loopback host.
func CheckTransport(baseURL string) error {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "http" || Loopback(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("%w: base_url %s is plain http to %s, not a loopback host: the key would cross the network in clear (use https)",
		ErrKeyPolicy, redactURL(baseURL), u.Hostname())
}

// Loopback reports whether host is this machine: localhost or a loopback
// address.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOf is the lower-case host name of a URL, "" when it has none.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// keyPolicy checks the member's key against the rules, with the member's
// exemptions: the variable's name, then the transport. A member without a
// key passes.
func (m MemberConfig) keyPolicy() error {
	if m.APIKeyEnv == "" && m.APIKey == "" {
		return nil
	}
	var errs []error
	if !m.AllowKeyEnv {
		errs = append(errs, CheckKeyEnv(m.APIKeyEnv, m.BaseURL))
	}
	if !m.AllowInsecure {
		errs = append(errs, CheckTransport(m.BaseURL))
	}
	return errors.Join(errs...)
}

// KeyRoute says, in words and without the key, which variable the member
// sends to which host: "OPENAI_API_KEY → api.openai.com (https)" or "no
// key → 127.0.0.1 (http)".
func (m MemberConfig) KeyRoute() string {
	scheme := "?"
	if u, err := url.Parse(m.BaseURL); err == nil {
		scheme = u.Scheme
	}
	what := "no key"
	switch {
	case m.APIKeyEnv != "":
		what = "$" + m.APIKeyEnv
	case m.APIKey != "":
		what = "a key"
	}
	return fmt.Sprintf("%s → %s (%s)", what, hostOf(m.BaseURL), scheme)
}
