package capture

import (
	"encoding/json"
	"net/http"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
)

// Auxiliary requests are the plugin's calls that are not chat turns: a
// title or summary after an answer, autocomplete, embeddings. The plugin
// adapter's traffic rules name them (Config.Classify). They are answered at
// once by a minimal valid stand-in (Config.StandIn), never by the
// responder, recorded (the Sink sees them, Exchange.Auxiliary names the
// rule) and kept apart: Next never hands them out, TakeAuxiliary does, so
// they never become turns and never reach SFT data.

// classify numbers the request's place since the session's last chat
// request and asks cfg.Classify whether it is auxiliary; it returns the
// matching rule's name or "".
func (h *Handler) classify(sessionID, path string, req dialog.ChatRequest) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessionLocked(sessionID)
	s.sinceChat++
	if h.cfg.Classify == nil {
		s.sinceChat = 1
		return ""
	}
	system := ""
	for _, m := range req.Messages {
		if m.Role == "system" {
			system = m.Content
			break
		}
	}
	rule := h.cfg.Classify(adapter.Request{Path: path, Stream: req.Stream, System: system, User: req.LastUser(), Position: s.sinceChat})
	if rule == "" {
		s.sinceChat = 1
	}
	return rule
}

// standIn answers an auxiliary request without the responder: the
// configured stand-in text, or "{}" when the request asks for a JSON object.
func (h *Handler) standIn(w http.ResponseWriter, r *http.Request, ex *dialog.Exchange, req Request, body []byte, includeUsage bool) (int, error) {
	text := h.cfg.StandIn
	if text == "" {
		text = "Untitled"
	}
	var shape struct {
		ResponseFormat *struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	if json.Unmarshal(body, &shape) == nil && shape.ResponseFormat != nil &&
		(shape.ResponseFormat.Type == "json_object" || shape.ResponseFormat.Type == "json_schema") {
		text = "{}"
	}
	ex.Responder, ex.Model, ex.Answer = "stand-in", req.Model, text
	model := req.Model
	if model == "" {
		model = h.cfg.ModelID
	}
	rp := newReply(ex.Session, ex.Seq, ex.Received, model, text, body)
	rp.n = req.N
	if req.Stream {
		return http.StatusOK, writeStream(r, w, rp, h.cfg.ChunkRunes, includeUsage)
	}
	return http.StatusOK, writeCompletion(w, rp)
}

// TakeAuxiliary returns the session's auxiliary exchanges recorded since
// the last call, and forgets them.
func (h *Handler) TakeAuxiliary(sessionID string) []dialog.Exchange {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[sessionID]
	if !ok {
		return nil
	}
	out := s.aux
	s.aux = nil
	return out
}
