package designbridge

// Identical exports in flight share one upstream call.

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// runCall runs fn as net/http runs a handler: a panic fails the call with
// a 500, its stack in the error (which Caddy logs), instead of ending the
// process, since no net/http recover stands above the call's goroutine.
func runCall(ctx context.Context, fn func(context.Context) (*exportAnswer, error)) (a *exportAnswer, err error) {
	defer func() {
		if v := recover(); v != nil {
			a, err = nil, caddyhttp.Error(http.StatusInternalServerError,
				fmt.Errorf("design_bridge: panic in a shared export: %v\n%s", v, debug.Stack()))
		}
	}()
	return fn(ctx)
}

// flightGroup runs one upstream call for identical exports that arrive
// while it is in flight. Unlike x/sync/singleflight it counts who waits:
// the call is cancelled only when every client waiting for it has gone,
// so one client going away never costs the others their answer.
type flightGroup struct {
	mu    sync.Mutex
	calls map[exportKey]*flightCall
}

type flightCall struct {
	body    *requestBody // what the call sends, compared whole by who joins
	done    chan struct{}
	answer  *exportAnswer
	err     error
	waiters int
	cancel  context.CancelFunc
}

// do returns the answer of the call for key and body, starting it with fn
// when none is in flight; joined reports that another export started it.
// When ctx ends first, do returns 499 (the client went away).
func (g *flightGroup) do(ctx context.Context, key exportKey, body *requestBody, fn func(context.Context) (*exportAnswer, error)) (a *exportAnswer, err error, joined bool) {
	g.mu.Lock()
	c, joined := g.calls[key]
	if joined {
		c.waiters++
	} else {
		// The call's context keeps the first request's values (request
		// id, replacer, logger) but not its cancellation.
		callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &flightCall{body: body, done: make(chan struct{}), waiters: 1, cancel: cancel}
		g.calls[key] = c
		// The call runs apart from every waiter; fn is bounded by timeout.
		go func() {
			defer cancel()
			c.answer, c.err = runCall(callCtx, fn)
			g.mu.Lock()
			if g.calls[key] == c {
				delete(g.calls, key)
			}
			g.mu.Unlock()
			close(c.done)
		}()
	}
	g.mu.Unlock()
	// The key holds only a hash of the body: compared whole (outside the
	// lock, a spooled body is read back), another body of the same hash
	// makes a call of its own, which nobody joins.
	if joined && !sameBody(c.body, body) {
		g.leave(key, c)
		a, err = runCall(ctx, fn)
		return a, err, false
	}
	select {
	case <-c.done:
		return c.answer, c.err, joined
	case <-ctx.Done():
		g.leave(key, c)
		return nil, caddyhttp.Error(499, ctx.Err()), joined
	}
}

// leave stops waiting for c; when nobody waits any more the call is
// cancelled, and an export arriving now starts a call of its own.
func (g *flightGroup) leave(key exportKey, c *flightCall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c.waiters--
	if c.waiters == 0 {
		c.cancel()
		if g.calls[key] == c {
			delete(g.calls, key)
		}
	}
}
