package configtest

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// Unmarshaler is a pointer to a module config T that reads a Caddyfile.
type Unmarshaler[T any] interface {
	*T
	caddyfile.Unmarshaler
}

// FuzzCaddyfile fuzzes a module's Caddyfile from seeds: every input that
// unmarshals into a new T is given to load, which must not panic.
func FuzzCaddyfile[T any, P Unmarshaler[T]](f *testing.F, seeds []string, load func(t *testing.T, h P)) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		// NewTestDispenser less its log.Fatalf on input the lexer refuses.
		tokens, err := caddyfile.Tokenize([]byte(input), "fuzz")
		var h T
		if err != nil || P(&h).UnmarshalCaddyfile(caddyfile.NewDispenser(tokens)) != nil {
			return
		}
		load(t, &h)
	})
}

// FuzzJSON fuzzes a module's JSON config from the Caddyfile seeds, as
// JSON, and the JSON documents extra: every input that decodes into a new
// T is given to load, which must not panic.
func FuzzJSON[T any, P Unmarshaler[T]](f *testing.F, seeds, extra []string, load func(t *testing.T, h P)) {
	for _, s := range seeds {
		var h T
		if tokens, err := caddyfile.Tokenize([]byte(s), "seed"); err == nil && P(&h).UnmarshalCaddyfile(caddyfile.NewDispenser(tokens)) == nil {
			js, _ := json.Marshal(h)
			f.Add(js)
		}
	}
	for _, doc := range extra {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var h T
		if json.Unmarshal(data, &h) != nil {
			return
		}
		load(t, &h)
	})
}

// HangGuard panics with every goroutine's stack unless the returned stop
// is called within d: a config load that hangs fails the fuzz run with
// its input, as a panic does.
func HangGuard(d time.Duration) (stop func() bool) {
	return time.AfterFunc(d, func() {
		buf := make([]byte, 1<<20)
		panic("load hangs:\n" + string(buf[:runtime.Stack(buf, true)]))
	}).Stop
}

// Provision runs m through Provision, then Validate if that succeeded,
// and Cleanup, as Caddy does when it loads a config; errors are the
// config's to give and are dropped.
func Provision(m interface {
	caddy.Provisioner
	caddy.Validator
	caddy.CleanerUpper
}) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := m.Provision(ctx); err == nil {
		_ = m.Validate()
	}
	_ = m.Cleanup()
}
