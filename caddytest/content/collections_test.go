package content

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// TestPageAndPopupCollections: /v1/page/… and /v1/popup/… answer page and
// popup designs (the corpus's, with DESIGN_CORPUS; the project's own
// always) with the renderer's HTML and plain text, through Caddy; the
// fidelity instrument holds that layout to the vendor's page and popup
// exports.
func TestPageAndPopupCollections(t *testing.T) {
	t.Parallel()
	tester := start(t)
	designs := designtest.OwnAndCorpus(t, true)
	ran := 0
	for _, name := range designtest.Names(designs) {
		var collections []string
		switch {
		case strings.Contains(name, "popup"):
			collections = []string{"popup"}
		case strings.Contains(name, "page-") || strings.HasPrefix(name, "starter-"):
			collections = []string{"page", "popup"}
		default:
			continue
		}
		d, err := design.Decode(designs[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		html, err := render.HTML(d)
		if err != nil {
			t.Fatal(err)
		}
		text, err := render.PlainText(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range collections {
			for _, tc := range []struct {
				path, ctype string
				want        []byte
			}{
				{"/v1/" + c + "/html", "text/html; charset=utf-8", html.Body},
				{"/v1/" + c + "/plain-text", "text/plain; charset=utf-8", text.Body},
			} {
				headers := bearer(apiToken)
				headers["Content-Type"] = "application/json"
				r := post(t, tester, http.MethodPost, replicaSite+tc.path, headers, designs[name])
				if r.status != 200 || r.header.Get("Content-Type") != tc.ctype || !bytes.Equal(r.body, tc.want) {
					t.Errorf("%s %s: %d %s, %d bytes (want %d)", name, tc.path, r.status, r.header.Get("Content-Type"), len(r.body), len(tc.want))
				}
				ran++
			}
		}
	}
	if ran == 0 {
		t.Fatal("no page or popup design")
	}
	// Their errors are the export's.
	r := post(t, tester, http.MethodPost, mainSite+"/v1/popup/html", bearer(apiToken), []byte(`{"rows":[]}`))
	if code, _, _ := exportError(t, r); r.status != 400 || code != 4101 {
		t.Errorf("not a design: %d %d", r.status, code)
	}
	r = post(t, tester, http.MethodPost, mainSite+"/v1/page/plain-text", nil, []byte(`{}`))
	if code, _, _ := exportError(t, r); r.status != 401 || code != 4001 {
		t.Errorf("no token: %d %d", r.status, code)
	}
}
