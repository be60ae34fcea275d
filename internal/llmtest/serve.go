package llmtest

import (
	"dialogfarm/internal/oaiwire"

	"dialogfarm/dialog"

	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	s.active.Add(1)
	defer s.active.Add(-1)

	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("read request body: %v", err))
		return
	}
	in, parseErr := dialog.ParseChatRequest(body)
	req := s.record(r, body, in)
	if parseErr != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("parse request body: %v", parseErr))
		return
	}

	rep := s.handler(req)
	if rep.Delay > 0 && !s.wait(r, rep.Delay) {
		return
	}
	if rep.DropAfterChunks < 0 {
		panic(http.ErrAbortHandler)
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	model := in.Model
	if model == "" {
		model = DefaultModel
	}
	switch {
	case rep.Raw != "":
		contentType := "application/json"
		if in.Stream && status < http.StatusBadRequest {
			contentType = "text/event-stream"
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, rep.Raw)
	case status >= http.StatusBadRequest:
		msg := rep.Text
		if msg == "" {
			msg = http.StatusText(status)
		}
		writeError(w, status, msg)
	case in.Stream:
		usage := usageFor(req, rep)
		if !in.IncludeUsage {
			usage = nil
		}
		s.stream(w, r, req.Seq, model, rep, usage)
	default:
		writeCompletion(w, status, req.Seq, model, rep, *usageFor(req, rep))
	}
}

// wait holds the reply back for d; false if the client or the server gave up
// first.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.done:
		return false
	}
}

type usage = oaiwire.Usage

func usageFor(req Request, rep Reply) *usage {
	u := usage{PromptTokens: rep.PromptTokens, CompletionTokens: rep.CompletionTokens}
	if u.PromptTokens == 0 {
		for _, m := range req.Messages {
			u.PromptTokens += len(strings.Fields(m.Content))
		}
	}
	if u.CompletionTokens == 0 {
		u.CompletionTokens = len(strings.Fields(rep.Text))
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return &u
}

func writeCompletion(w http.ResponseWriter, status, seq int, model string, rep Reply, u usage) {
	body := marshal(oaiwire.NewCompletion(completionID(seq), time.Now().Unix(), model, rep.Text, u))
	w.Header().Set("Content-Type", "application/json")
	if rep.DropAfterChunks > 0 {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body[:len(body)/2])
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// stream writes the reply as SSE chunk frames: the role, one frame per piece
// of text, the finish reason, the usage if asked for, then [DONE].
func (s *Server) stream(w http.ResponseWriter, r *http.Request, seq int, model string, rep Reply, u *usage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	frames := oaiwire.StreamChunks(completionID(seq), time.Now().Unix(), model, Split(rep.Text), u)
	for i, f := range frames {
		if r.Context().Err() != nil {
			return
		}
		if rep.DropAfterChunks > 0 && i == rep.DropAfterChunks {
			panic(http.ErrAbortHandler)
		}
		if err := writeFrame(w, rc, marshal(f)); err != nil {
			return
		}
	}
	if rep.DropAfterChunks > 0 {
		panic(http.ErrAbortHandler)
	}
	_ = writeFrame(w, rc, []byte("[DONE]"))
}

func writeFrame(w io.Writer, rc *http.ResponseController, data []byte) error {
	if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
		return err
	}
	return rc.Flush()
}

// Split cuts text into the pieces a stream sends, one word with the
// whitespace after it per piece; the pieces concatenate to text.
func Split(text string) []string { return oaiwire.Words(text) }

func completionID(seq int) string { return fmt.Sprintf("chatcmpl-llmtest-%d", seq) }

// errorBody is the OpenAI error document.
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	var e errorBody
	e.Error.Message = msg
	e.Error.Type, e.Error.Code = errorKind(status)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(marshal(e))
}

// errorKind is the error type and code the real API uses for a status.
func errorKind(status int) (string, *string) {
	code := func(s string) *string { return &s }
	switch {
	case status == http.StatusUnauthorized:
		return "invalid_request_error", code("invalid_api_key")
	case status == http.StatusNotFound:
		return "invalid_request_error", code("not_found")
	case status == http.StatusTooManyRequests:
		return "requests", code("rate_limit_exceeded")
	case status >= http.StatusInternalServerError:
		return "server_error", nil
	default:
		return "invalid_request_error", nil
	}
}

func serveModels(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{{ID: DefaultModel, Object: "model", Created: 1700000000, OwnedBy: "llmtest"}}}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(marshal(list))
}

func serveNotFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
}

// marshal encodes v as compact JSON without HTML escaping, as the real API
// writes it. The values are the package's own types, which always encode.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("llmtest: encode " + fmt.Sprintf("%T", v) + ": " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
