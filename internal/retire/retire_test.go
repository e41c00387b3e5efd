package retire

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/testutil/conntest"
)

// TestRetiredLeavesNoConnection: a live transport keeps its connection
// alive; a retired one closes the connection of every request it still
// carries.
func TestRetiredLeavesNoConnection(t *testing.T) {
	srv := conntest.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	for _, retired := range []bool{false, true} {
		inner := &http.Transport{}
		tr := New(inner)
		if retired {
			tr.Retire()
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if req.Close {
			t.Error("RoundTrip changed the caller's request")
		}
		if retired {
			if n := srv.WaitClosed(2 * time.Second); n != 0 {
				t.Errorf("a request through a retired transport left %d connection(s) open", n)
			}
		} else if n := srv.Open(); n != 1 {
			t.Errorf("a live transport kept %d connections, want 1 (kept alive)", n)
		}
		tr.CloseIdleConnections()
		srv.WaitClosed(2 * time.Second)
	}
}
