// Package shutdown lets an http.Server stop at once while connections
// that never began a request are open.
package shutdown

import (
	"net"
	"net/http"
	"sync"
)

// CloseUnused makes srv close, when it shuts down, the connections that
// have not begun a request. http.Server.Shutdown counts such a connection
// as busy until it is 5 s old, and they are common: browsers open
// sockets ahead of need, and Go's HTTP client keeps one it dialled for a
// request that another, freed first, served. A request that begins on one
// while the server stops fails as if the server had already gone. It sets
// srv.ConnState, wrapping any hook already there; call it before srv
// serves.
func CloseUnused(srv *http.Server) {
	var (
		mu     sync.Mutex
		unused = map[net.Conn]struct{}{}
	)
	next := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		if s == http.StateNew {
			unused[c] = struct{}{}
		} else {
			delete(unused, c)
		}
		mu.Unlock()
		if next != nil {
			next(c, s)
		}
	}
	srv.RegisterOnShutdown(func() {
		mu.Lock()
		defer mu.Unlock()
		for c := range unused {
			_ = c.Close()
		}
	})
}
