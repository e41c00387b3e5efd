package fsp

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// panicStorage panics in every operation but Close, which it records.
type panicStorage struct {
	Storage // nil: each call panics
	closed  bool
}

func (s *panicStorage) Close() error { s.closed = true; return nil }

// TestPanicEndsItsRequest: a request that panics (a decoder's bug, say)
// still ends its count, so that Cleanup after a reload closes the storage.
func TestPanicEndsItsRequest(t *testing.T) {
	s := &panicStorage{}
	h := &Handler{Root: defaultRoot, PublicURL: "http://localhost/files", AllowAnonymous: true, storage: s, logger: zap.NewNop()}
	h.life = &lifetime{close: h.release}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-BEE-ClientId", "c1")
	r.Header.Set("X-BEE-Uid", "u1")
	r = r.WithContext(context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddyhttp.NewTestReplacer(r)))
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the storage did not panic")
			}
		}()
		_ = h.ServeHTTP(httptest.NewRecorder(), r, nil)
	}()
	if err := h.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if !s.closed {
		t.Error("Cleanup did not close the storage: the panicking request is still counted")
	}
}
