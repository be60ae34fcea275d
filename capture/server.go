package capture

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"dialogfarm/internal/shutdown"
)

// Server is a Handler listening on 127.0.0.1.
type Server struct {
	*Handler

	addr     string
	srv      *http.Server
	cancel   context.CancelFunc // ends every request's context
	served   chan struct{}
	stopOnce sync.Once
	stopErr  error
}

// Listen starts an endpoint on 127.0.0.1:cfg.Port (0: a free port) answering
// with r; sink and log may be nil. ctx bounds only the listening itself; the
// server runs until Shutdown.
func Listen(ctx context.Context, cfg Config, r Responder, sink Sink, log *zap.Logger) (*Server, error) {
	if log == nil {
		log = zap.NewNop()
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port))
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for the capture endpoint on %s: %w", addr, err)
	}
	base, cancel := context.WithCancel(context.Background())
	h := NewHandler(cfg, r, sink, log)
	s := &Server{
		Handler: h,
		addr:    ln.Addr().String(),
		cancel:  cancel,
		served:  make(chan struct{}),
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 30 * time.Second,
			BaseContext:       func(net.Listener) context.Context { return base },
			ErrorLog:          zap.NewStdLog(log.Named("http")),
		},
	}
	shutdown.CloseUnused(s.srv)
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("capture endpoint stopped serving", zap.String("addr", s.addr), zap.Error(err))
		}
	}()
	log.Info("capture endpoint listening", zap.String("addr", s.addr))
	return s, nil
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.addr }

// URL is the server's root URL with the run secret as its first segment,
// http://127.0.0.1:PORT/<secret>: every route lies under it.
func (s *Server) URL() string { return "http://" + s.addr + "/" + s.Secret() }

// BaseURL is the OpenAI base URL a plugin uses for session:
// http://127.0.0.1:PORT/<secret>/s/<session>/v1. See CheckSession for valid
// ids.
func (s *Server) BaseURL(session string) string {
	return s.URL() + "/s/" + session + "/v1"
}

// Shutdown stops accepting requests and waits for the ones being answered to
// finish. If ctx ends first, their contexts are cancelled and their
// connections closed, and Shutdown still waits for the handlers to return
// (responders must honour ctx). Then every Next with nothing left to hand out
// returns ErrClosed. Calling it again returns the first result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() {
		if err := s.srv.Shutdown(ctx); err != nil {
			s.cancel()
			_ = s.srv.Close() // its listener is closed already; the connections are what matter
			s.stopErr = fmt.Errorf("shut down the capture endpoint on %s: %w", s.addr, err)
		}
		<-s.served
		s.Handler.wait()
		s.cancel()
		s.Handler.Close()
	})
	return s.stopErr
}
