package dialog

import (
	"slices"
	"testing"
)

func TestParseChatRequest(t *testing.T) {
	cases := []struct {
		name, body string
		want       []Message
		last       string
		bad        bool
	}{
		{"strings", `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"a\nb"}]}`,
			[]Message{{"system", "s"}, {"user", "a\nb"}}, "a\nb", false},
		{"parts and null", `{"messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"image_url"},{"type":"text","text":"y"}]},{"role":"assistant","content":null}]}`,
			[]Message{{"user", "xy"}, {"assistant", ""}}, "xy", false},
		{"bad content", `{"messages":[{"role":"user","content":7}]}`, nil, "", true},
		{"not json", `{`, nil, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseChatRequest([]byte(c.body))
			if (err != nil) != c.bad {
				t.Fatalf("err = %v", err)
			}
			if !c.bad && (!slices.Equal(r.Messages, c.want) || r.LastUser() != c.last) {
				t.Errorf("got %+v (last user %q)", r.Messages, r.LastUser())
			}
		})
	}
}
