package browserpool

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

// TestHTTPFetcherWaitsForSlot: a render's image takes one of the slots it
// shares with the handler's checks; while none is free it waits, until
// its context ends, and the image host never hears of it.
func TestHTTPFetcherWaitsForSlot(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("png"))
	}))
	defer srv.Close()
	client, tr := safefetch.NewClient(5*time.Second, safefetch.Policy{AllowPrivate: true})
	defer tr.Retire()
	slots := safefetch.NewSlots(1)
	f := &HTTPFetcher{Client: client, MaxSize: 1 << 10, Slots: slots}

	release, err := slots.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, _, err := f.Fetch(ctx, srv.URL+"/a.png"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with every slot held: err %v, want the context's deadline", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the image host got %d requests while no slot was free", n)
	}
	release()
	if body, _, err := f.Fetch(context.Background(), srv.URL+"/a.png"); err != nil || string(body) != "png" {
		t.Fatalf("with a free slot: %q, %v", body, err)
	}
	again, cancelAgain := context.WithTimeout(context.Background(), time.Second)
	defer cancelAgain()
	if _, err := slots.Acquire(again); err != nil {
		t.Fatalf("the fetch kept its slot: %v", err)
	}
}
