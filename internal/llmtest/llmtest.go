// Package llmtest is a fake OpenAI-compatible chat completions server: a test
// fixture that speaks the real wire protocol, so code under test talks HTTP to
// it exactly as it would to a model service.
//
// It serves POST /v1/chat/completions (a chat.completion JSON document, or a
// stream of SSE "data: {chat.completion.chunk}" frames ending in
// "data: [DONE]") and GET /v1/models, and a handler decides each reply:
// a text, an error status with an OpenAI-shaped error body, a Retry-After
// header, a delay (honouring the request's context, so a client that gives up
// releases the handler at once), a stream that drops its connection after N
// chunks, or a raw body such as malformed JSON.
//
//	s := llmtest.New(t, llmtest.Fixed("hello"))
//	cfg := openai.DefaultConfig("key")
//	cfg.BaseURL = s.URL
//
// The server listens on 127.0.0.1 only. Every method is safe for concurrent
// use; the handler may be called from several goroutines at once.
package llmtest

import (
	"dialogfarm/dialog"

	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DefaultModel is the model a reply names when the request named none, and
// the one model GET /v1/models lists.
const DefaultModel = "llmtest-model"

// DropImmediately as Reply.DropAfterChunks closes the connection before any
// byte of the response is written.
const DropImmediately = -1

// Message is one chat message of a request. Content given as an array of
// parts is flattened to the concatenation of its text parts.
type Message = dialog.Message

// Request is one POST /v1/chat/completions the server received.
type Request struct {
	// Seq numbers the chat requests from 1 in the order they arrived,
	// malformed ones included (they are answered 400 without asking the
	// handler).
	Seq      int
	Model    string
	Messages []Message
	Stream   bool
	// Body is the request body byte for byte; Header a copy of the headers.
	Body   []byte
	Header http.Header
	// At is when it arrived.
	At time.Time
}

// LastUser is the content of the request's last user message, or "".
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Reply is what the server answers to one request.
type Reply struct {
	// Text is the answer's content; with an error Status it is the error
	// message.
	Text string
	// Status is the HTTP status; 0 means 200. A status of 400 or more
	// answers an OpenAI-shaped error body {"error":{"message","type","code"}}.
	Status int
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Delay holds the reply back this long. A client that disconnects or
	// whose context ends first releases the handler at once.
	Delay time.Duration
	// DropAfterChunks > 0 closes the connection abruptly after that many
	// chat.completion.chunk frames (the first frame carries the role, each
	// following one a piece of Text); the stream never ends with [DONE].
	// A non-streaming reply is cut off in the middle of its JSON body.
	// DropImmediately closes the connection before any response.
	DropAfterChunks int
	// Raw, when set, is written as the body as is (with Status, default 200),
	// e.g. malformed JSON or hand-written SSE frames.
	Raw string
	// PromptTokens and CompletionTokens are reported as usage; 0 means
	// estimate them as a count of whitespace-separated words.
	PromptTokens, CompletionTokens int
}

// Handler decides the reply to each request.
type Handler func(Request) Reply

// Echo answers with the content of the request's last user message.
func Echo(r Request) Reply { return Reply{Text: r.LastUser()} }

// Fixed answers every request with text.
func Fixed(text string) Handler {
	return func(Request) Reply { return Reply{Text: text} }
}

// Server is a running fake. URL is its base URL, ending in /v1.
type Server struct {
	URL string

	srv     *httptest.Server
	handler Handler
	done    chan struct{} // closed by Close: delayed replies give up
	once    sync.Once
	active  atomic.Int64 // chat handlers running, for leak checks

	mu   sync.Mutex
	reqs []Request
}

// New starts a server answering with handler (nil means Echo) and closes it
// when the test ends.
func New(tb testing.TB, handler Handler) *Server {
	tb.Helper()
	s := Start(handler)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a server answering with handler (nil means Echo); the caller
// closes it. It panics if it cannot listen on 127.0.0.1, as httptest does.
func Start(handler Handler) *Server {
	if handler == nil {
		handler = Echo
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("llmtest: listen on 127.0.0.1: " + err.Error())
	}
	s := &Server{handler: handler, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.serveChat)
	mux.HandleFunc("GET /v1/models", serveModels)
	mux.HandleFunc("/", serveNotFound)
	s.srv = httptest.NewUnstartedServer(mux)
	s.srv.Listener = ln
	s.srv.Start()
	s.URL = strings.TrimSuffix(s.srv.URL, "/") + "/v1"
	return s
}

// Close stops the server: pending delays end, and it returns once every
// handler has returned. It is safe to call more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// Requests returns a copy of the chat requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// record numbers and stores one request.
func (s *Server) record(r *http.Request, body []byte, in dialog.ChatRequest) Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := Request{
		Seq:      len(s.reqs) + 1,
		Model:    in.Model,
		Messages: in.Messages,
		Stream:   in.Stream,
		Body:     slices.Clone(body),
		Header:   r.Header.Clone(),
		At:       time.Now(),
	}
	s.reqs = append(s.reqs, req)
	return req
}

// EchoKey answers every request with an error that echoes the request's
// Authorization header, as careless upstreams do, cycling through 500 (a
// plain-text body, which clients cannot parse as JSON), 429 (an
// OpenAI-shaped JSON error, with Retry-After: 0) and 401 (the same), so a
// client retrying transient errors sees all three. It is how tests show
// that a key never leaks from an upstream's error text.
func EchoKey(r Request) Reply {
	auth := r.Header.Get("Authorization")
	switch r.Seq % 3 {
	case 1:
		return Reply{Status: http.StatusInternalServerError, Raw: "internal error while serving " + auth + "\n"}
	case 2:
		return Reply{Status: http.StatusTooManyRequests, RetryAfter: "0", Text: "rate limit for key " + auth + " reached"}
	}
	return Reply{Status: http.StatusUnauthorized, Text: "Incorrect API key provided: " + auth}
}
