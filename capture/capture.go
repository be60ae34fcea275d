// Package capture is the OpenAI-compatible endpoint the editor's Q&A plugin
// talks to while a simulator drives it. Every chat completion request is
// recorded byte for byte as a dialog.Exchange, a Responder supplies the
// answer, and the answer goes back to the plugin in the wire format it asked
// for (SSE chunks for "stream": true, a chat.completion document otherwise),
// so the dialogue continues in the editor with that answer in its history.
//
// Every request must carry the run's secret (Config.Secret, random unless
// given): either as the first path segment or as the bearer key. Anything
// else, a cross-origin text/plain POST from a web page included, gets 401
// and is neither answered nor recorded. Requests belong to a simulator
// session, named in the path or in the API key:
//
//	POST http://127.0.0.1:PORT/<secret>/s/<session>/v1/chat/completions
//	POST http://127.0.0.1:PORT/<secret>/v1/chat/completions   Authorization: Bearer session-<session>
//	POST http://127.0.0.1:PORT/s/<session>/v1/chat/completions   Authorization: Bearer <secret>
//
// so a plugin's base URL for a session is Server.BaseURL(session), which
// carries the secret, and many simulators share one endpoint. GET
// .../v1/models lists one model.
//
// A driver names the config and turn it is driving with Expect; every
// request that arrives afterwards is labelled with them (Exchange.ConfigID
// and Exchange.Turn), so an exchange that completes late can never be
// taken for a later config's or turn's.
//
// A driver waits for the exchange its action caused with Next, which blocks
// until the answer has been sent (or the request failed) and hands out each
// exchange of a session once, in the order they completed. A Sink, when
// given, sees every exchange first (a run folder appends them to a JSONL log).
//
// Requests without a session, or with a body that is not JSON, are answered
// with an OpenAI-shaped 400 error; the latter are still recorded (with Error
// set and the body kept as a JSON string) so a broken plugin shows in the log.
// Responder failures are answered with 502, or with the upstream model's
// status when the failure was an HTTP error from it, or 504 when the
// responder ran out of time.
package capture

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
)

// Message is one chat message of a captured request. Content given as an
// array of parts is the concatenation of its text parts.
type Message = dialog.Message

// Request is a captured chat completion request, as a Responder sees it.
type Request struct {
	Session string
	Seq     int
	// Body is the request body exactly as the plugin sent it; it is also
	// the recorded Exchange.Request, so a Responder must not modify it.
	Body        json.RawMessage
	Model       string
	Messages    []Message
	Stream      bool
	Temperature *float32
	// N is how many choices the plugin asked for (n, at least 1); a
	// non-streamed answer repeats the one answer in each.
	N int
}

// Answer is a Responder's reply to a Request.
type Answer struct {
	Text string
	// Model is the model that wrote Text; the request's model if empty.
	Model string
	// Responder names who answered ("openai", "offline", "pool", ...).
	Responder string
	// Offline marks placeholder answers that are never training data.
	Offline    bool
	Candidates []dialog.Candidate
	// Missing lists the pool members that gave no candidate, and why.
	Missing  []dialog.Missing
	Verdicts []dialog.Verdict
}

// Responder answers captured requests. It must honour ctx, which ends when
// the plugin disconnects or the endpoint shuts down. On error it may still
// fill Answer.Responder, Candidates and Verdicts, which are recorded.
type Responder interface {
	Respond(ctx context.Context, req Request) (Answer, error)
}

// ResponderFunc adapts a function to a Responder.
type ResponderFunc func(ctx context.Context, req Request) (Answer, error)

// Respond calls f.
func (f ResponderFunc) Respond(ctx context.Context, req Request) (Answer, error) {
	return f(ctx, req)
}

// Sink receives every completed exchange before Next hands it out. Calls
// are serialized. An error is logged and returned by Next with the exchange.
type Sink interface {
	Record(ex dialog.Exchange) error
}

// ErrClosed is returned by Next once the endpoint is closed and the session
// has no exchange left to hand out.
var ErrClosed = errors.New("capture endpoint closed")

// ErrBadSession is returned by CheckSession for an unusable session id.
var ErrBadSession = errors.New("bad session id")

var sessionPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// CheckSession reports whether id can name a session: 1 to 128 ASCII
// letters, digits, '.', '_' or '-', so it is safe in a URL path and a key.
func CheckSession(id string) error {
	if !sessionPattern.MatchString(id) {
		return fmt.Errorf("session %q: %w (want 1-128 of A-Z a-z 0-9 . _ -)", id, ErrBadSession)
	}
	return nil
}

// SessionKeyPrefix starts an API key that names a session: "session-<id>".
const SessionKeyPrefix = "session-"

// Config tunes the endpoint.
type Config struct {
	// Port to listen on at 127.0.0.1; 0 picks a free one.
	Port int
	// ModelID is listed by GET /v1/models and named in answers when neither
	// the responder nor the request names a model.
	ModelID string
	// MaxBodyBytes bounds a request body; larger ones get 413.
	MaxBodyBytes int64
	// ChunkRunes is about how many characters one streamed chunk carries;
	// answers are cut at whitespace, so chunks hold whole words when they can.
	ChunkRunes int
	// RespondTimeout bounds one Responder call; 0 means no bound beyond the
	// plugin's own connection.
	RespondTimeout time.Duration
	// Secret is what every request must carry (see the package doc); empty
	// draws a random one (NewSecret). It is never logged.
	Secret string
	// Classify names the plugin adapter's traffic rule that makes a request
	// auxiliary (not a chat turn), or returns ""; nil: every request is a
	// chat turn. See TakeAuxiliary.
	Classify func(adapter.Request) string
	// StandIn answers auxiliary requests; empty: "Untitled" ("{}" when a
	// JSON object is asked for).
	StandIn string
}

// NewSecret returns over 256 random bits as base32 text (A-Z, 2-7), fit
// for a path segment, a bearer key or a password.
func NewSecret() string {
	return rand.Text() + rand.Text()
}

// DefaultConfig is a free port, 8 MiB bodies, chunks of about 24
// characters and a 10 minute bound on answering.
func DefaultConfig() Config {
	return Config{
		ModelID:        "dialogfarm-capture",
		MaxBodyBytes:   8 << 20,
		ChunkRunes:     24,
		RespondTimeout: 10 * time.Minute,
	}
}

// soleCandidate asks r for one answer to msgs and returns it as the only
// candidate, named member: a one-model "pool" for the judge.
func soleCandidate(ctx context.Context, r Responder, member string, msgs []dialog.Message, temperature *float32) ([]dialog.Candidate, []dialog.Missing, error) {
	req := Request{Messages: make([]Message, len(msgs)), Temperature: temperature}
	for i, m := range msgs {
		req.Messages[i] = Message{Role: m.Role, Content: m.Content}
	}
	start := time.Now()
	ans, err := r.Respond(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	return []dialog.Candidate{{Member: member, Model: ans.Model, Text: ans.Text, Offline: ans.Offline,
		Seconds: time.Since(start).Seconds()}}, nil, nil
}
