package capture

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"dialogfarm/dialog"
)

// session is the exchanges of one simulator session.
type session struct {
	seq   int         // the last Seq handed to a request
	label label       // what requests arriving now belong to (Expect)
	done  []completed // completed exchanges, in completion order
	next  int         // index in done of the first one Next has not handed out
	ready chan struct{}
	// aux are the auxiliary exchanges not yet taken (TakeAuxiliary);
	// sinceChat counts requests since the last chat request, itself included.
	aux       []dialog.Exchange
	sinceChat int
}

type completed struct {
	ex      dialog.Exchange
	sinkErr error
}

// sessionLocked returns the session, creating it; h.mu must be held.
func (h *Handler) sessionLocked(id string) *session {
	s, ok := h.sessions[id]
	if !ok {
		s = &session{ready: make(chan struct{})}
		h.sessions[id] = s
	}
	return s
}

// label is the config and turn a session's requests belong to.
type label struct {
	configID string
	turn     int
}

// Expect labels the requests of session that arrive from now on with the
// config and turn the simulator is driving, until the next Expect: each
// exchange records them (Exchange.ConfigID, Exchange.Turn), so an exchange
// that completes late — after its config failed or timed out — can never
// be taken for the turn that follows.
func (h *Handler) Expect(sessionID, configID string, turn int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sessionLocked(sessionID).label = label{configID: configID, turn: turn}
}

// begin numbers a request of session id, from 1, and labels it with the
// config and turn the session expects now.
func (h *Handler) begin(ex *dialog.Exchange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessionLocked(ex.Session)
	s.seq++
	ex.Seq, ex.ConfigID, ex.Turn = s.seq, s.label.configID, s.label.turn
}

// finish hands a completed exchange to the sink, then to Next.
// The sink lock is held throughout, so the sink and Next see a session's
// exchanges in the same order.
func (h *Handler) finish(ex dialog.Exchange) {
	h.sinkMu.Lock()
	defer h.sinkMu.Unlock()
	var sinkErr error
	if h.sink != nil {
		if err := h.sink.Record(ex); err != nil {
			sinkErr = fmt.Errorf("record exchange %d of session %s: %w", ex.Seq, ex.Session, err)
			h.log.Error("sink failed", zap.String("session", ex.Session), zap.Int("seq", ex.Seq), zap.Error(err))
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessionLocked(ex.Session)
	if ex.Auxiliary != "" {
		s.aux = append(s.aux, ex)
		return
	}
	s.done = append(s.done, completed{ex: ex, sinkErr: sinkErr})
	close(s.ready)
	s.ready = make(chan struct{})
}

// Next returns the session's next exchange that Next has not returned yet,
// in the order exchanges completed, waiting until one completes: its answer
// has been sent to the plugin, or its request failed (Exchange.Error says
// how). It returns ctx's error when ctx ends first, and ErrClosed once the
// handler is closed and nothing is left. If the sink failed to record the
// exchange, Next returns the exchange together with that error.
func (h *Handler) Next(ctx context.Context, sessionID string) (dialog.Exchange, error) {
	for {
		h.mu.Lock()
		s := h.sessionLocked(sessionID)
		if s.next < len(s.done) {
			c := s.done[s.next]
			s.next++
			h.mu.Unlock()
			return c.ex, c.sinkErr
		}
		ready := s.ready
		h.mu.Unlock()

		select {
		case <-ready:
		case <-ctx.Done():
			return dialog.Exchange{}, fmt.Errorf("wait for the next exchange of session %s: %w", sessionID, ctx.Err())
		case <-h.closed:
			return dialog.Exchange{}, fmt.Errorf("wait for the next exchange of session %s: %w", sessionID, ErrClosed)
		}
	}
}

// Exchanges returns a copy of the session's completed exchanges, in the order
// they completed, whether Next handed them out or not.
func (h *Handler) Exchanges(sessionID string) []dialog.Exchange {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[sessionID]
	if !ok {
		return nil
	}
	out := make([]dialog.Exchange, len(s.done))
	for i, c := range s.done {
		out[i] = c.ex
	}
	return out
}

// Forget drops the completed exchanges the handler holds for a session,
// handed out by Next or not, so a long run does not keep every exchange in
// memory: the driver calls it between configs. The session's numbering
// goes on (the next request gets the next Seq), so session and Seq still
// name one exchange in exchanges.jsonl; a Next waiting on the session keeps
// waiting for its next exchange.
func (h *Handler) Forget(sessionID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.sessions[sessionID]; ok {
		s.done, s.next, s.aux = nil, 0, nil
	}
}
