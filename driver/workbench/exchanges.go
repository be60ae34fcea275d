package workbench

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"dialogfarm/dialog"
)

// Exchanges is what the driver needs from the capture endpoint: the base
// URL a session's plugin must use, each request it sent with its answer,
// and the labelling of those requests with the config and turn being
// driven (Expect), so an exchange is only ever taken for its own turn.
type Exchanges interface {
	BaseURL(session string) string
	Expect(session, configID string, turn int)
	Next(ctx context.Context, session string) (dialog.Exchange, error)
	// Forget drops the session's completed exchanges (between configs),
	// so memory does not grow with the number of configs driven.
	Forget(session string)
}

// drain discards exchanges of this session that no turn took, e.g. from a
// config that failed after its request went out, so they cannot be
// mistaken for the next config's, and lets the capture endpoint forget
// the session's exchanges: they are in the record and exchanges.jsonl.
func (s *Session) drain(ctx context.Context) {
	done, cancel := context.WithCancel(ctx)
	cancel()
	defer s.capture.Forget(s.ID)
	for {
		ex, err := s.capture.Next(done, s.ID)
		if err != nil && ex.Seq == 0 {
			return
		}
		s.log.Debug("discarded an exchange no turn took", zap.Int("seq", ex.Seq))
	}
}

// takeExchange returns the session's next exchange labelled with configID
// and turn, skipping (and logging) any other: a late exchange of an
// earlier config or turn is never attached to this one.
func takeExchange(ctx context.Context, c Exchanges, session, configID string, turn int, log *zap.Logger) (dialog.Exchange, error) {
	for {
		ex, err := c.Next(ctx, session)
		if err != nil {
			return ex, fmt.Errorf("take the captured request of %s turn %d: %w", configID, turn, err)
		}
		if ex.ConfigID == configID && ex.Turn == turn {
			return ex, nil
		}
		log.Warn("skipped an exchange of another config or turn", zap.Int("seq", ex.Seq),
			zap.String("exchange_config", ex.ConfigID), zap.Int("exchange_turn", ex.Turn),
			zap.String("config", configID), zap.Int("turn", turn))
	}
}
