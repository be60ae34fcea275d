package capture

import (
	"dialogfarm/internal/oaiwire"

	"dialogfarm/dialog"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"
)

// errNotJSON marks a body that is not JSON at all.
var errNotJSON = errors.New("request body is not valid JSON")

// parseRequest reads the fields a Responder needs from a request body.
func parseRequest(body []byte) (req Request, includeUsage bool, err error) {
	if !json.Valid(body) {
		return Request{}, false, errNotJSON
	}
	in, err := dialog.ParseChatRequest(body)
	if err != nil {
		return Request{}, false, fmt.Errorf("parse chat completion request: %w", err)
	}
	if len(in.Messages) == 0 {
		return Request{}, false, errors.New("parse chat completion request: messages must be a non-empty array")
	}
	var extra struct {
		N int `json:"n"`
	}
	_ = json.Unmarshal(body, &extra) // a wrong type for n only loses n
	req = Request{
		Body:        json.RawMessage(body),
		Model:       in.Model,
		Stream:      in.Stream,
		Temperature: in.Temperature,
		Messages:    in.Messages,
		N:           max(extra.N, 1),
	}
	return req, in.IncludeUsage, nil
}

// reply is what goes back to the plugin for one answered request.
type reply struct {
	id      string
	created int64
	model   string
	text    string
	usage   usage
	n       int // choices asked for; each carries the same answer
}

type usage = oaiwire.Usage

// estimateUsage guesses token counts at four bytes a token; the endpoint
// reports usage only because some plugins display it.
func estimateUsage(body []byte, text string) usage {
	u := usage{PromptTokens: (len(body) + 3) / 4, CompletionTokens: (len(text) + 3) / 4}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func writeCompletion(w http.ResponseWriter, rp reply) error {
	c := oaiwire.NewCompletion(rp.id, rp.created, rp.model, rp.text, rp.usage)
	for i := 1; i < rp.n; i++ {
		ch := c.Choices[0]
		ch.Index = i
		c.Choices = append(c.Choices, ch)
	}
	body := marshal(c)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(body); err != nil {
		return fmt.Errorf("write chat completion: %w", err)
	}
	return nil
}

// writeStream sends the answer as SSE chunk frames, flushing each: the role,
// the text in pieces of about chunkRunes characters, the finish reason "stop",
// the usage when asked for, then "data: [DONE]".
func writeStream(r *http.Request, w http.ResponseWriter, rp reply, chunkRunes int, includeUsage bool) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	var u *usage
	if includeUsage {
		u = &rp.usage
	}
	var frames [][]byte
	for _, c := range oaiwire.StreamChunks(rp.id, rp.created, rp.model, splitChunks(rp.text, chunkRunes), u) {
		frames = append(frames, marshal(c))
	}
	frames = append(frames, []byte("[DONE]"))
	for i, f := range frames {
		if err := r.Context().Err(); err != nil {
			return fmt.Errorf("stream answer: plugin went away after %d of %d frames: %w", i, len(frames), err)
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", f); err != nil {
			return fmt.Errorf("stream answer frame %d: %w", i+1, err)
		}
		if err := rc.Flush(); err != nil {
			return fmt.Errorf("flush answer frame %d: %w", i+1, err)
		}
	}
	return nil
}

// splitChunks cuts text into pieces of about n characters that concatenate
// to text: words (with the whitespace after them) are packed together up to
// n characters, and a word longer than n is cut every n characters.
func splitChunks(text string, n int) []string {
	if n <= 0 {
		n = 1
	}
	var out []string
	start, end, runes := 0, 0, 0 // the current chunk is text[start:end], runes long
	for _, w := range oaiwire.Words(text) {
		wr := utf8.RuneCountInString(w)
		if runes > 0 && runes+wr > n {
			out = append(out, text[start:end])
			start, runes = end, 0
		}
		for wr > n { // the chunk is empty here: cut the long word
			cut := chunkLen(w, n)
			out = append(out, w[:cut])
			w, wr = w[cut:], wr-n
			end += cut
			start = end
		}
		end += len(w)
		runes += wr
	}
	if start < end {
		out = append(out, text[start:end])
	}
	return out
}

// chunkLen is the byte length of the first n runes of s.
func chunkLen(s string, n int) int {
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// Error types in OpenAI-shaped error bodies.
const (
	errTypeInvalidRequest = "invalid_request_error"
	errTypeUpstream       = "upstream_error"
	errTypeServer         = "server_error"
)

type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// writeError answers an OpenAI-shaped error document.
func writeError(w http.ResponseWriter, status int, errType, code, msg string) {
	var e errorBody
	e.Error.Message, e.Error.Type = msg, errType
	if code != "" {
		e.Error.Code = &code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(marshal(e))
}

// marshal encodes the package's own wire types as compact JSON without HTML
// escaping, as the real API writes them; they always encode.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("capture: encode %T: %v", v, err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// quoteBody keeps a body that is not JSON as a JSON string, so the exchange
// still encodes.
func quoteBody(body []byte) json.RawMessage {
	return marshal(string(body))
}

func newReply(session string, seq int, received time.Time, model, text string, body []byte) reply {
	return reply{
		id:      fmt.Sprintf("chatcmpl-%s-%d", session, seq),
		created: received.Unix(),
		model:   model,
		text:    text,
		usage:   estimateUsage(body, text),
	}
}
