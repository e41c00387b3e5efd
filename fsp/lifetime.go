package fsp

import "sync"

// lifetime counts the requests in a handler, so that Cleanup's closing
// waits for the last of them.
type lifetime struct {
	mu       sync.Mutex
	inFlight int
	closing  bool // Cleanup was called
	closed   bool
	close    func()
}

// acquire registers a request; false once the handler is closed.
func (l *lifetime) acquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.inFlight++
	return true
}

// done ends a request; the last one after Cleanup closes the handler.
func (l *lifetime) done() {
	l.mu.Lock()
	l.inFlight--
	last := l.closing && l.inFlight == 0 && !l.closed
	if last {
		l.closed = true
	}
	l.mu.Unlock()
	if last {
		l.close()
	}
}

// shutdown closes now if no request is in flight, else after the last.
func (l *lifetime) shutdown() {
	l.mu.Lock()
	l.closing = true
	now := l.inFlight == 0 && !l.closed
	if now {
		l.closed = true
	}
	l.mu.Unlock()
	if now {
		l.close()
	}
}
