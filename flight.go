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
// a 500, its stack in the error (which Caddy logs), so that every export
// waiting for the call gets that answer and the call is not left behind.
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
	body     *requestBody // what the call sends, compared whole by who joins
	done     chan struct{}
	answer   *exportAnswer
	err      error
	waiters  int
	finished bool // the answer is in; each waiter left holds a reference to it
	cancel   context.CancelFunc
}

// do returns the answer of the call for key and body, starting it with fn
// when none is in flight; joined reports that another export started it.
// When ctx ends first, do returns 499 (the client went away): at once
// for an export that joined, once the call is over for the one that
// started it (see run). The caller holds a reference to a non-nil
// answer, which it releases when done.
//
// fn holds body as its owner; the group holds a reference of its own
// while the call can be found (joiners compare it), and each joiner one
// while it compares.
func (g *flightGroup) do(ctx context.Context, key exportKey, body *requestBody, fn func(context.Context) (*exportAnswer, error)) (a *exportAnswer, err error, joined bool) {
	g.mu.Lock()
	c, joined := g.calls[key]
	if !joined {
		// The call's context keeps the first request's values (request
		// id, replacer, logger) but not its cancellation.
		callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &flightCall{body: body, done: make(chan struct{}), waiters: 1, cancel: cancel}
		body.retain()
		g.calls[key] = c
		g.mu.Unlock()
		a, err = g.run(ctx, key, c, callCtx, fn)
		return a, err, false
	}
	c.waiters++
	c.body.retain()
	g.mu.Unlock()
	// The key holds only a hash of the body: compared whole (outside the
	// lock, a large body is read back), another body of the same key
	// makes a call of its own, which nobody joins.
	if !g.compare(key, c, body) {
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

// run makes the call c in the goroutine of the export that started it:
// handing it to a goroutine of its own cost a switch between goroutines
// on every export, most of the bridge's cost over reverse_proxy with one
// export at a time. When that export's client goes away it leaves like
// any waiter (and answers 499): the call goes on while others wait for
// it, this goroutine with it, and is cancelled when nobody does.
func (g *flightGroup) run(ctx context.Context, key exportKey, c *flightCall, callCtx context.Context, fn func(context.Context) (*exportAnswer, error)) (*exportAnswer, error) {
	defer c.cancel()
	stop := context.AfterFunc(ctx, func() { g.leave(key, c) })
	a, err := runCall(callCtx, fn)
	stayed := stop() // false: leave has run, or is about to
	g.mu.Lock()
	c.answer, c.err = a, err
	if g.calls[key] == c {
		delete(g.calls, key)
	}
	// One reference for each waiter still counted (none can join any
	// more), whether it takes the answer or leaves.
	if a != nil {
		a.holds.Add(int32(c.waiters))
	}
	c.finished = true
	g.mu.Unlock()
	close(c.done)
	_ = c.body.release() // nobody can find the call to compare it now
	if a != nil {
		a.release() // the call's own
	}
	if !stayed {
		return nil, caddyhttp.Error(499, ctx.Err())
	}
	return a, err
}

// compare reports whether body is the one c sends, and lets go of the
// reference to c's body that the joiner took; for another body (or a
// panic while comparing) it leaves c too, so that c's body and answer
// are never held for a waiter that is gone.
func (g *flightGroup) compare(key exportKey, c *flightCall, body *requestBody) (same bool) {
	defer func() {
		_ = c.body.release()
		if !same {
			g.leave(key, c)
		}
	}()
	return sameBody(c.body, body)
}

// leave stops waiting for c; when nobody waits any more the call is
// cancelled, and an export arriving now starts a call of its own. Once
// the call has finished, leaving gives back the waiter's reference to its
// answer.
func (g *flightGroup) leave(key exportKey, c *flightCall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.finished {
		if c.answer != nil {
			c.answer.release()
		}
		return
	}
	c.waiters--
	if c.waiters == 0 {
		c.cancel()
		if g.calls[key] == c {
			delete(g.calls, key)
		}
	}
}
