package contract

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

type body struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func TestWrite(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodHead} {
		w := httptest.NewRecorder()
		w.Header().Set("Content-Encoding", "gzip") // an earlier handler's
		r := httptest.NewRequest(method, "/x", nil)
		if err := Write(w, r, 418, body{4180, "a <b> & c"}); err != nil {
			t.Fatal(err)
		}
		want := `{"code":4180,"message":"a <b> & c"}`
		h := w.Header()
		if w.Code != 418 || h.Get("Content-Type") != "application/json" || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("Content-Length") != "35" || h.Get("Content-Encoding") != "" {
			t.Errorf("%s: %d %v", method, w.Code, h)
		}
		if got := w.Body.String(); (method == http.MethodHead && got != "") || (method != http.MethodHead && got != want) {
			t.Errorf("%s: body %q", method, got)
		}
	}
}
