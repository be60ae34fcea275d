package capture

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/zap"

	"dialogfarm/dialog"
)

// Handler is the capture endpoint as an http.Handler. Its methods are safe
// for concurrent use.
type Handler struct {
	cfg       Config
	responder Responder
	sink      Sink
	log       *zap.Logger
	mux       *http.ServeMux

	sinkMu   sync.Mutex // serializes finish: sink.Record and the hand-over to Next
	inflight sync.WaitGroup

	mu        sync.Mutex
	sessions  map[string]*session
	closed    chan struct{}
	closeOnce sync.Once
}

// NewHandler returns an endpoint answering with r. sink and log may be nil.
// Zero fields of cfg take their DefaultConfig values.
func NewHandler(cfg Config, r Responder, sink Sink, log *zap.Logger) *Handler {
	if log == nil {
		log = zap.NewNop()
	}
	def := DefaultConfig()
	if cfg.ModelID == "" {
		cfg.ModelID = def.ModelID
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = def.MaxBodyBytes
	}
	if cfg.ChunkRunes <= 0 {
		cfg.ChunkRunes = def.ChunkRunes
	}
	if cfg.Secret == "" {
		cfg.Secret = NewSecret()
	}
	h := &Handler{
		cfg:       cfg,
		responder: r,
		sink:      sink,
		log:       log,
		sessions:  map[string]*session{},
		closed:    make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /s/{session}/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		h.chat(w, r, r.PathValue("session"))
	})
	mux.HandleFunc("POST /v1/chat/completions", h.chatByKey)
	mux.HandleFunc("GET /s/{session}/v1/models", h.models)
	mux.HandleFunc("GET /v1/models", h.models)
	mux.HandleFunc("/", h.notFound)
	h.mux = mux
	return h
}

// ServeHTTP checks the run secret and routes the request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r, ok := h.authorize(r)
	if !ok {
		// Neither the path nor the key is logged: either may hold a
		// guess at the secret or a real key.
		h.log.Warn("request without the run secret rejected", zap.String("method", r.Method),
			zap.String("remote", r.RemoteAddr), zap.String("origin", r.Header.Get("Origin")))
		w.Header().Set("WWW-Authenticate", `Bearer realm="dialogfarm capture"`)
		writeError(w, http.StatusUnauthorized, errTypeInvalidRequest, "invalid_api_key",
			"missing or wrong run secret: use the base URL (or key) this run gave the plugin")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Secret is the run secret every request must carry.
func (h *Handler) Secret() string { return h.cfg.Secret }

// authorize accepts r when its first path segment is the secret (and
// returns r without that segment) or its bearer key is the secret.
func (h *Handler) authorize(r *http.Request) (*http.Request, bool) {
	secret := []byte(h.cfg.Secret)
	first, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if subtle.ConstantTimeCompare([]byte(first), secret) == 1 {
		r2 := new(http.Request)
		*r2 = *r
		u := *r.URL
		u.Path = "/" + rest
		u.RawPath = ""
		if r.URL.RawPath != "" {
			_, rawRest, _ := strings.Cut(strings.TrimPrefix(r.URL.RawPath, "/"), "/")
			u.RawPath = "/" + rawRest
		}
		r2.URL = &u
		return r2, true
	}
	key, ok := bearer(r.Header.Get("Authorization"))
	return r, ok && subtle.ConstantTimeCompare([]byte(key), secret) == 1
}

// chatByKey serves /v1/chat/completions, whose session is the API key.
// The key itself is never logged or echoed: it may be a real one.
func (h *Handler) chatByKey(w http.ResponseWriter, r *http.Request) {
	key, ok := bearer(r.Header.Get("Authorization"))
	id, named := strings.CutPrefix(key, SessionKeyPrefix)
	if !ok || !named {
		h.log.Warn("chat completion without a session", zap.String("path", r.URL.Path))
		writeError(w, http.StatusBadRequest, errTypeInvalidRequest, "missing_session",
			"no session: use the base URL /s/<session>/v1 or the API key session-<session>")
		return
	}
	h.chat(w, r, id)
}

func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// chat records one exchange of session and answers it.
func (h *Handler) chat(w http.ResponseWriter, r *http.Request, sessionID string) {
	received := time.Now()
	if err := CheckSession(sessionID); err != nil {
		h.log.Warn("chat completion with a bad session id", zap.Error(err))
		writeError(w, http.StatusBadRequest, errTypeInvalidRequest, "bad_session", err.Error())
		return
	}
	h.inflight.Add(1)
	defer h.inflight.Done()

	ex := dialog.Exchange{Session: sessionID, Received: received}
	h.begin(&ex)
	status, err := h.answer(w, r, &ex)
	if err != nil {
		ex.Error = err.Error()
	}
	ex.Seconds = time.Since(received).Seconds()
	h.log.Info("exchange",
		zap.String("session", ex.Session), zap.Int("seq", ex.Seq), zap.Int("status", status),
		zap.String("responder", ex.Responder), zap.String("model", ex.Model), zap.Bool("offline", ex.Offline),
		zap.Float64("seconds", ex.Seconds), zap.String("error", ex.Error))
	h.finish(ex)
}

// answer reads the request into ex, asks the responder and sends its answer,
// returning the status sent and what went wrong.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, ex *dialog.Exchange) (int, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		ex.Request = quoteBody(body)
		status := http.StatusBadRequest
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			status = http.StatusRequestEntityTooLarge
		}
		err = fmt.Errorf("read request body: %w", err)
		writeError(w, status, errTypeInvalidRequest, "", err.Error())
		return status, err
	}
	req, includeUsage, err := parseRequest(body)
	if err != nil {
		ex.Request = body
		if errors.Is(err, errNotJSON) {
			ex.Request = quoteBody(body)
		}
		writeError(w, http.StatusBadRequest, errTypeInvalidRequest, "", err.Error())
		return http.StatusBadRequest, err
	}
	ex.Request = req.Body
	req.Session, req.Seq = ex.Session, ex.Seq
	if ex.Auxiliary = h.classify(ex.Session, r.URL.Path, dialog.ChatRequest{Model: req.Model, Messages: req.Messages, Stream: req.Stream}); ex.Auxiliary != "" {
		return h.standIn(w, r, ex, req, body, includeUsage)
	}

	ctx := r.Context()
	if h.cfg.RespondTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.cfg.RespondTimeout)
		defer cancel()
	}
	ans, err := h.responder.Respond(ctx, req)
	ex.Responder, ex.Model, ex.Offline = ans.Responder, ans.Model, ans.Offline
	ex.Candidates, ex.Missing, ex.Verdicts = ans.Candidates, ans.Missing, ans.Verdicts
	if ex.Responder == "" {
		ex.Responder = responderName(h.responder)
	}
	if ex.Model == "" {
		ex.Model = req.Model
	}
	if err != nil {
		status := errorStatus(err)
		err = fmt.Errorf("responder %s: %w", ex.Responder, err)
		writeError(w, status, errTypeFor(status), "", err.Error())
		return status, err
	}
	ex.Answer = ans.Text

	model := ex.Model
	if model == "" {
		model = h.cfg.ModelID
	}
	rp := newReply(ex.Session, ex.Seq, ex.Received, model, ans.Text, body)
	rp.n = req.N
	if req.Stream {
		return http.StatusOK, writeStream(r, w, rp, h.cfg.ChunkRunes, includeUsage)
	}
	return http.StatusOK, writeCompletion(w, rp)
}

// errorStatus is the status a responder failure is answered with: the
// upstream model's HTTP status when it failed with one, 504 when time ran
// out, 502 otherwise.
func errorStatus(err error) int {
	upstream := 0
	if apiErr, ok := errors.AsType[*openai.APIError](err); ok {
		upstream = apiErr.HTTPStatusCode
	} else if reqErr, ok := errors.AsType[*openai.RequestError](err); ok {
		upstream = reqErr.HTTPStatusCode
	}
	switch {
	case upstream >= 400 && upstream <= 599:
		return upstream
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	default:
		return http.StatusBadGateway
	}
}

func errTypeFor(status int) string {
	if status < http.StatusInternalServerError {
		return errTypeInvalidRequest
	}
	return errTypeUpstream
}

// responderName names a responder that left Answer.Responder empty.
func responderName(r Responder) string {
	if n, ok := r.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", r)
}

func (h *Handler) models(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{{ID: h.cfg.ModelID, Object: "model", OwnedBy: "dialogfarm"}}}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(marshal(list))
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.log.Warn("no route", zap.String("method", r.Method), zap.String("path", r.URL.Path))
	writeError(w, http.StatusNotFound, errTypeInvalidRequest, "not_found",
		fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
}

// Close releases every Next waiting on a session with nothing left to hand
// out; they return ErrClosed. Requests are still served. Safe to call twice.
func (h *Handler) Close() {
	h.closeOnce.Do(func() { close(h.closed) })
}

// wait returns once no request is being answered.
func (h *Handler) wait() { h.inflight.Wait() }
