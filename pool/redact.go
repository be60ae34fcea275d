package pool

import (
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// minSecretLen is the shortest key that is cut out of texts: shorter
// "keys" (local servers that take any word) would garble every message
// that happens to contain them.
const minSecretLen = 4

// scrubber cuts API keys out of texts and errors: an upstream that echoes
// the bearer token in its error body (many do, in their 401s) must not put
// the key into an error, a log line, a record or the plugin's error bubble.
type scrubber []string

// newScrubber cuts the given keys, ignoring empty and very short ones.
func newScrubber(keys ...Secret) scrubber {
	var s scrubber
	for _, k := range keys {
		if len(k) >= minSecretLen {
			s = append(s, string(k))
		}
	}
	return s
}

// text is t with every key replaced by "[redacted]".
func (s scrubber) text(t string) string {
	for _, k := range s {
		t = strings.ReplaceAll(t, k, redacted)
	}
	return t
}

func (s scrubber) leaks(t string) bool {
	for _, k := range s {
		if strings.Contains(t, k) {
			return true
		}
	}
	return false
}

// err is err with every key cut from its text. When the text holds no key
// err is returned as is; otherwise the result prints the cut text and
// unwraps to a copy of go-openai's APIError or RequestError with the key
// cut from its message and body too (so errors.As still finds the HTTP
// status), or to nothing.
func (s scrubber) err(err error) error {
	if err == nil || !s.leaks(err.Error()) {
		return err
	}
	out := &scrubbedError{msg: s.text(err.Error())}
	if e, ok := errors.AsType[*openai.APIError](err); ok {
		c := *e
		c.Message, c.Type, c.InnerError = s.text(c.Message), s.text(c.Type), nil
		if c.Param != nil {
			p := s.text(*c.Param)
			c.Param = &p
		}
		if code, ok := c.Code.(string); ok {
			c.Code = s.text(code)
		} else if c.Code != nil && s.leaks(fmt.Sprint(c.Code)) {
			c.Code = nil
		}
		out.err = &c
	} else if e, ok := errors.AsType[*openai.RequestError](err); ok {
		c := *e
		c.Body = []byte(s.text(string(c.Body)))
		if c.Err != nil {
			c.Err = errors.New(s.text(c.Err.Error()))
		}
		out.err = &c
	}
	return out
}

// scrubbedError is an error whose text had a key cut out.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
