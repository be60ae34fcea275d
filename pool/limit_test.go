package pool

import "testing"

// Calls share a limit when they go to one endpoint and model with the key
// of one variable, however the base URL is written; any other model,
// variable or endpoint has a limit of its own. The key says nothing of the
// endpoint.
func TestLimitKey(t *testing.T) {
	m := func(base, model, env string) MemberConfig {
		return MemberConfig{BaseURL: base, Model: model, APIKeyEnv: env}
	}
	a := m("https://api.example/v1", "gpt-x", "OPENAI_API_KEY").LimitKey()
	if b := m("https://api.example/v1/", "gpt-x", "OPENAI_API_KEY").LimitKey(); b != a {
		t.Errorf("a trailing slash gives another limit: %s, %s", a, b)
	}
	for _, other := range []MemberConfig{
		m("https://api.example/v1", "gpt-y", "OPENAI_API_KEY"),
		m("https://api.example/v1", "gpt-x", "TEAM_B_KEY"),
		m("https://other.example/v1", "gpt-x", "OPENAI_API_KEY"),
	} {
		if other.LimitKey() == a {
			t.Errorf("%+v shares the limit of gpt-x at api.example", other)
		}
	}
	if len(a) != 24 {
		t.Errorf("limit key %q, want 24 hex digits", a)
	}
}
