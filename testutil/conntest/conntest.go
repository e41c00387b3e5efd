// Package conntest starts HTTP test servers that count their open
// connections, for tests that check a transport leaves none behind.
// Test-only: no product package imports it.
package conntest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Server is an httptest.Server that knows how many connections are open.
type Server struct {
	*httptest.Server
	mu     sync.Mutex
	open   map[net.Conn]bool
	opened int
}

// New starts a Server with handler h; Close stops it.
func New(h http.Handler) *Server {
	s := &Server{Server: httptest.NewUnstartedServer(h), open: map[net.Conn]bool{}}
	s.Config.ConnState = func(c net.Conn, state http.ConnState) {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch state {
		case http.StateNew:
			s.open[c] = true
			s.opened++
		case http.StateClosed, http.StateHijacked:
			delete(s.open, c)
		}
	}
	s.Start()
	return s
}

// Open returns the number of open connections.
func (s *Server) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

// Opened returns the number of connections accepted so far.
func (s *Server) Opened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// WaitClosed waits up to d for every connection to close (the server sees
// a close once the client has made it) and returns how many are open.
func (s *Server) WaitClosed(d time.Duration) int {
	for deadline := time.Now().Add(d); s.Open() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return s.Open()
}
