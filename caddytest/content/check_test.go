package content

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

func init() {
	config += `
:{$PORT_FETCH} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		fetch {
			allow_private all
			timeout 1s
			total_timeout 3s
		}
	}
}

:{$PORT_RANGES} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		fetch {
			allow_private 127.0.0.2/32
			timeout 1s
			total_timeout 3s
		}
		browser off
	}
}
`
}

// imageHost serves /img/<bytes>/<name> with that Content-Length, and
// /hang/<name>, which never answers; it counts the requests it gets.
func imageHost(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	return imageHostAt(t, "127.0.0.1")
}

// imageHostAt is imageHost listening on the loopback address addr.
func imageHostAt(t *testing.T, addr string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Skipf("%s is not available: %v", addr, err)
	}
	var hits atomic.Int64
	done := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		parts := strings.Split(r.URL.Path, "/")
		switch {
		case len(parts) == 4 && parts[1] == "img":
			n, _ := strconv.Atoi(parts[2])
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", strconv.Itoa(n))
			if r.Method == http.MethodGet {
				_, _ = w.Write(make([]byte, n))
			}
		case len(parts) == 3 && parts[1] == "fat":
			// 1 MiB of header before a small image.
			line := strings.Repeat("a", 1000)
			for i := range 1024 {
				w.Header().Set("X-Pad-"+strconv.Itoa(i), line)
			}
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", "10")
			if r.Method == http.MethodGet {
				_, _ = w.Write(make([]byte, 10))
			}
		case len(parts) == 3 && parts[1] == "hang":
			select {
			case <-done:
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(func() { close(done); srv.Close() })
	return srv, &hits
}

// checkDesign is the Check API's test design (designcheck/testdata) with
// its image URLs moved to base: photo 100 KiB, big 600 KiB, the gif
// 2 MiB, the icons 1 KiB, the social X icon hanging.
func checkDesign(t *testing.T, base string) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(designtest.Root(), "designcheck", "testdata", "checks.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer(
		"https://img.example/a/photo%20one.jpg", base+"/img/102400/photo.jpg",
		"https://img.example/big.png", base+"/img/614400/big.png",
		"https://media.example/anim.gif?cid=1", base+"/img/2097152/anim.gif",
		"https://icons.example/facebook.png", base+"/img/1024/facebook.png",
		"https://icons.example/x.png", base+"/hang/x.png",
		"https://icons.example/i/star.png", base+"/img/1024/star.png",
	).Replace(string(data))
	return json.RawMessage(s)
}

// checkAnswer is the Check API's answer, decoded loosely so that member
// names are checked as sent.
type checkAnswer []struct {
	Language              string           `json:"language"`
	Checks                []map[string]any `json:"checks"`
	ChecksFailedCount     *int             `json:"checksFailedCount"`
	ChecksWarningCount    *int             `json:"checksWarningCount"`
	ChecksSuggestionCount *int             `json:"checksSuggestionCount"`
	Status                string           `json:"status"`
}

func postCheck(t *testing.T, site *string, path string, body any) (response, checkAnswer) {
	t.Helper()
	tester := start(t) // sets site: a test run on its own starts Caddy here
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	headers := bearer(apiToken)
	headers["Content-Type"] = "application/json"
	r := post(t, tester, http.MethodPost, *site+path, headers, data)
	checkRequestID(t, r)
	noSecrets(t, r)
	if r.status != http.StatusOK {
		return r, nil
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	var ans checkAnswer
	if err := json.Unmarshal(r.body, &ans); err != nil {
		t.Fatalf("answer %s: %v", r.body, err)
	}
	return r, ans
}

// byType finds a check's answer by its type.
func byType(t *testing.T, checks []map[string]any, typ string) map[string]any {
	t.Helper()
	for _, c := range checks {
		if c["type"] == typ {
			return c
		}
	}
	t.Fatalf("no %s in %v", typ, checks)
	return nil
}

// TestCheckMessage: every check of /v1/message/check on one design,
// through Caddy, with images weighed over HTTP.
func TestCheckMessage(t *testing.T) {
	t.Parallel()
	srv, _ := imageHost(t)
	r, ans := postCheck(t, &fetchSite, "/v1/message/check", map[string]any{
		"languages": []string{"it-IT"},
		"checks": []map[string]any{
			{"category": "missingAltText"},
			{"category": "missingImageLink"},
			{"category": "missingCopyLink"},
			{"category": "overageImageWeight", "limit": 500},
			{"category": "missingDetailsEmail"},
			{"category": "overageHtmlWeight", "limit": 80, "beautified": true},
		},
		"template": checkDesign(t, srv.URL),
	})
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if len(ans) != 2 || ans[0].Language != "default" || ans[1].Language != "it-IT" {
		t.Fatalf("languages: %s", r.body)
	}
	def := ans[0]
	if len(def.Checks) != 6 || def.Status != "warning" || def.ChecksFailedCount == nil || def.ChecksWarningCount == nil || def.ChecksSuggestionCount == nil {
		t.Fatalf("default: %s", r.body)
	}

	alt := byType(t, def.Checks, "missingAltText")
	wantAlt := []any{
		map[string]any{"uuid": "img-1", "widgetType": "image", "widgetLabel": "photo.jpg", "locked": true, "synced": false},
		map[string]any{"uuid": "gif-1", "widgetType": "gif", "widgetLabel": srv.URL + "/img/2097152/anim.gif", "locked": true, "synced": false},
		map[string]any{"uuid": "soc-1", "widgetType": "social", "widgetLabel": "facebook", "locked": false, "synced": true},
		map[string]any{"uuid": "ico-1", "widgetType": "icon", "widgetLabel": "star.png", "locked": true, "synced": true},
	}
	if alt["checkStatus"] != "warning" || alt["targetsCount"] != float64(4) || !reflect.DeepEqual(alt["targets"], wantAlt) {
		t.Errorf("missingAltText: %v", alt)
	}
	if c := byType(t, def.Checks, "missingImageLink"); c["checkStatus"] != "suggestion" || c["targetsCount"] != float64(2) {
		t.Errorf("missingImageLink: %v", c)
	}
	if c := byType(t, def.Checks, "missingCopyLink"); c["checkStatus"] != "warning" || c["targetsCount"] != float64(3) {
		t.Errorf("missingCopyLink: %v", c)
	}
	details := byType(t, def.Checks, "missingDetailsEmail")
	if !reflect.DeepEqual(details["targets"], []any{map[string]any{"detailType": "preheader"}}) || details["checkStatus"] != "suggestion" {
		t.Errorf("missingDetailsEmail: %v", details)
	}

	img := byType(t, def.Checks, "overageImageWeight")
	var weights []any
	for _, tg := range img["targets"].([]any) {
		weights = append(weights, tg.(map[string]any)["uuid"], tg.(map[string]any)["weight"])
	}
	if !reflect.DeepEqual(weights, []any{"img-2", 600.0, "gif-1", 2048.0}) || img["limit"] != 500.0 || img["evaluated"] != 6.0 || img["errored"] != 1.0 {
		t.Errorf("overageImageWeight: %v", img)
	}
	errored, _ := img["erroredTargets"].([]any)
	if len(errored) != 1 || errored[0].(map[string]any)["widgetLabel"] != "x" || errored[0].(map[string]any)["reason"] != "timed out" {
		t.Errorf("erroredTargets: %v", img["erroredTargets"])
	}

	html := byType(t, def.Checks, "overageHtmlWeight")
	if html["checkStatus"] != "passed" || html["processed"] != true || html["displayConditions"] != false || html["limit"] != 80.0 {
		t.Errorf("overageHtmlWeight: %v", html)
	}
	if w, ok := html["maxWeight"].(float64); !ok || w <= 0 || w > 80 {
		t.Errorf("maxWeight %v", html["maxWeight"])
	}

	// The translation: only the per-widget checks, with the Italian copy.
	it := ans[1]
	if len(it.Checks) != 3 {
		t.Errorf("it-IT has %d checks, want the 3 widget checks", len(it.Checks))
	}
	copyIT := byType(t, it.Checks, "missingCopyLink")
	var labels []any
	for _, tg := range copyIT["targets"].([]any) {
		labels = append(labels, tg.(map[string]any)["widgetLabel"])
	}
	if !reflect.DeepEqual(labels, []any{"Buy now", "Leggi", "facebook", "Blog"}) {
		t.Errorf("it-IT missingCopyLink labels %v", labels)
	}
}

// TestCheckImagesNotFetchedFromPrivate: without allow_private, an image
// on loopback is never requested; it is reported, the check still
// answers.
func TestCheckImagesNotFetchedFromPrivate(t *testing.T) {
	t.Parallel()
	srv, hits := imageHost(t)
	r, ans := postCheck(t, &mainSite, "/v1/message/check", map[string]any{
		"checks":   []map[string]any{{"category": "overageImageWeight"}},
		"template": checkDesign(t, srv.URL),
	})
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	img := ans[0].Checks[0]
	if img["errored"] != 6.0 || img["targetsCount"] != 0.0 {
		t.Errorf("overageImageWeight: %v", img)
	}
	for _, e := range img["erroredTargets"].([]any) {
		if reason := e.(map[string]any)["reason"]; reason != "address not allowed" {
			t.Errorf("reason %v, want address not allowed", reason)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback image host got %d requests", hits.Load())
	}
}

// TestCheckImagesFromListedRangeOnly: with "allow_private 127.0.0.2/32"
// the images of a host on 127.0.0.2 are weighed, while those of a host on
// 127.0.0.1 are reported as not allowed and never requested: listing a
// range opens only it.
func TestCheckImagesFromListedRangeOnly(t *testing.T) {
	t.Parallel()
	inRange, inHits := imageHostAt(t, "127.0.0.2")
	outside, outHits := imageHost(t)
	check := func(base string) map[string]any {
		t.Helper()
		r, ans := postCheck(t, &rangesSite, "/v1/message/check", map[string]any{
			"checks":   []map[string]any{{"category": "overageImageWeight"}},
			"template": checkDesign(t, base),
		})
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		return ans[0].Checks[0]
	}
	img := check(inRange.URL)
	// Five images weighed; the sixth never answers (timeout 1s).
	if img["errored"] != 1.0 {
		t.Errorf("127.0.0.2: overageImageWeight %v, want only the hanging image errored", img)
	}
	for _, e := range img["erroredTargets"].([]any) {
		if reason := e.(map[string]any)["reason"]; reason == "address not allowed" {
			t.Errorf("127.0.0.2: %v refused", e)
		}
	}
	if inHits.Load() == 0 {
		t.Error("the image host on 127.0.0.2 got no request")
	}
	img = check(outside.URL)
	if img["errored"] != 6.0 || img["targetsCount"] != 0.0 {
		t.Errorf("127.0.0.1: overageImageWeight %v, want the 6 images errored", img)
	}
	for _, e := range img["erroredTargets"].([]any) {
		if reason := e.(map[string]any)["reason"]; reason != "address not allowed" {
			t.Errorf("127.0.0.1: reason %v, want address not allowed", reason)
		}
	}
	if n := outHits.Load(); n != 0 {
		t.Errorf("the image host on 127.0.0.1 got %d requests", n)
	}
}

// TestCheckMetadataWrappedRefused: with allow_private, cloud metadata
// stays closed in the IPv6 forms a gateway unwraps into it (NAT64 on a
// network that serves the well-known prefix, 6to4, Teredo): each image is
// refused before any connection, as 169.254.169.254 itself is. Without
// the check, the client dialled them (here, where no route leads there,
// "could not be fetched" or "timed out"; behind a NAT64 gateway, the
// metadata endpoint answered).
func TestCheckMetadataWrappedRefused(t *testing.T) {
	t.Parallel()
	for _, host := range []string{
		"169.254.169.254",
		"[64:ff9b::a9fe:a9fe]",
		"[64:ff9b:1:a9fe:a9:fe00::]",
		"[::a9fe:a9fe]",
		"[2002:a9fe:a9fe::1]",
		"[2001:0:102:304::5601:5601]",
	} {
		t.Run(host, func(t *testing.T) {
			r, ans := postCheck(t, &fetchSite, "/v1/message/check", map[string]any{
				"checks":   []map[string]any{{"category": "overageImageWeight"}},
				"template": checkDesign(t, "http://"+host),
			})
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			img := ans[0].Checks[0]
			if img["errored"] != 6.0 {
				t.Fatalf("overageImageWeight %v, want the 6 images errored", img)
			}
			for _, e := range img["erroredTargets"].([]any) {
				if reason := e.(map[string]any)["reason"]; reason != "address not allowed" {
					t.Errorf("reason %v, want address not allowed", reason)
				}
			}
		})
	}
}

// TestCheckHungImages: images that never answer are reported once the
// fetch bounds pass; the answer never hangs.
func TestCheckHungImages(t *testing.T) {
	t.Parallel()
	srv, _ := imageHost(t)
	d := strings.ReplaceAll(string(checkDesign(t, srv.URL)), srv.URL+"/img/", srv.URL+"/hang/x")
	start := time.Now()
	r, ans := postCheck(t, &fetchSite, "/v1/page/check", map[string]any{
		"checks":   []map[string]any{{"category": "overageImageWeight"}},
		"template": json.RawMessage(d),
	})
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if ans[0].Checks[0]["errored"] != 6.0 {
		t.Errorf("overageImageWeight: %v", ans[0].Checks[0])
	}
	// total_timeout 3s on the site: well under the test's patience.
	if elapsed := time.Since(start); elapsed > 15*time.Second {
		t.Errorf("the answer took %v", elapsed)
	}
}

// TestCheckImageHeadersBounded: an image server's answer is read no
// further than 64 KiB of header; one of 1 MiB is reported, not weighed
// (each such answer was held whole while the check ran).
func TestCheckImageHeadersBounded(t *testing.T) {
	t.Parallel()
	srv, _ := imageHost(t)
	// Every image (…/img/<size>/<name>, …/hang/<name>) at …/fat/<name>.
	d := regexp.MustCompile(`/(img/[0-9]+|hang)/`).ReplaceAllString(string(checkDesign(t, srv.URL)), "/fat/")
	r, ans := postCheck(t, &fetchSite, "/v1/page/check", map[string]any{
		"checks":   []map[string]any{{"category": "overageImageWeight"}},
		"template": json.RawMessage(d),
	})
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	img := ans[0].Checks[0]
	if img["errored"] != 6.0 {
		t.Fatalf("overageImageWeight: %v, want the 6 images errored", img)
	}
	for _, e := range img["erroredTargets"].([]any) {
		if reason := e.(map[string]any)["reason"]; reason != "could not be fetched" {
			t.Errorf("reason %v, want could not be fetched", reason)
		}
	}
}

// TestCheckPageAndRow: the page and row collections take their own
// checks and their own design shapes.
func TestCheckPageAndRow(t *testing.T) {
	t.Parallel()
	r, ans := postCheck(t, &mainSite, "/v1/page/check", map[string]any{
		"checks":   []map[string]any{{"category": "missingDetailsPage"}},
		"template": json.RawMessage(`{"page":{"head":{"meta":{"title":"Spring"}},"rows":[]}}`),
	})
	if r.status != http.StatusOK || !reflect.DeepEqual(ans[0].Checks[0]["targets"], []any{map[string]any{"detailType": "description"}}) {
		t.Errorf("page details: %d %s", r.status, r.body)
	}
	row := `{"uuid":"r-9","synced":true,"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-button","uuid":"b-9","descriptor":{"button":{"label":"Go","href":""}}}]}]}`
	r, ans = postCheck(t, &mainSite, "/v1/row/check", map[string]any{
		"checks": []map[string]any{{"category": "missingCopyLink"}},
		"row":    json.RawMessage(row),
	})
	want := []any{map[string]any{"uuid": "b-9", "widgetType": "button", "widgetLabel": "Go", "locked": false, "synced": true}}
	if r.status != http.StatusOK || !reflect.DeepEqual(ans[0].Checks[0]["targets"], want) || ans[0].Status != "warning" {
		t.Errorf("row: %d %s", r.status, r.body)
	}
	// The template may also come as the editor's JSON string.
	r, ans = postCheck(t, &mainSite, "/v1/message/check", map[string]any{
		"checks":   []map[string]any{{"category": "missingDetailsEmail"}},
		"template": `{"page":{"head":{"meta":{"subject":"s","preheader":"p"}},"rows":[]}}`,
	})
	if r.status != http.StatusOK || ans[0].Status != "passed" || ans[0].Checks[0]["checkStatus"] != "passed" {
		t.Errorf("template as a string: %d %s", r.status, r.body)
	}
}

func TestCheckErrors(t *testing.T) {
	t.Parallel()
	tester := start(t)
	alt := `"checks":[{"category":"missingAltText"}]`
	for _, tt := range []struct {
		name, method, path, ctype, body string
		status, code                    int
		details                         string
	}{
		{"GET", "GET", "/v1/message/check", "", "", 405, 405, ""},
		{"not JSON", "POST", "/v1/message/check", "", "checks please", 400, 4100, ""},
		{"array", "POST", "/v1/message/check", "", "[]", 400, 4102, "JSON object with checks and template"},
		{"checks not a list", "POST", "/v1/message/check", "", `{"checks":"all","template":{}}`, 400, 4102, "checks must not be string"},
		{"no checks", "POST", "/v1/message/check", "", `{"template":{"page":{"rows":[]}}}`, 400, 4102, "at least one check"},
		{"no template", "POST", "/v1/message/check", "", `{` + alt + `}`, 400, 4102, "template is required"},
		{"row without row", "POST", "/v1/row/check", "", `{` + alt + `,"template":{"page":{"rows":[]}}}`, 400, 4102, "row is required"},
		{"row not an object", "POST", "/v1/row/check", "", `{` + alt + `,"row":[1]}`, 400, 4102, "row must be an object"},
		{"unknown check", "POST", "/v1/message/check", "", `{"checks":[{"category":"spelling"}],"template":{"page":{"rows":[]}}}`, 400, 4102, `"spelling"`},
		{"email check on a page", "POST", "/v1/page/check", "", `{"checks":[{"category":"overageHtmlWeight"}],"template":{"page":{"rows":[]}}}`, 400, 4102, "/v1/page/check"},
		{"bad limit", "POST", "/v1/message/check", "", `{"checks":[{"category":"overageImageWeight","limit":0}],"template":{"page":{"rows":[]}}}`, 400, 4102, "limit"},
		{"bad language", "POST", "/v1/message/check", "", `{"languages":["../x"],` + alt + `,"template":{"page":{"rows":[]}}}`, 400, 4102, "languages[0]"},
		{"template not a design", "POST", "/v1/message/check", "", `{` + alt + `,"template":{"page":{"rows":"no"}}}`, 400, 4101, "template.page"},
		{"row not a row", "POST", "/v1/row/check", "", `{` + alt + `,"row":{"columns":[{"modules":"no"}]}}`, 400, 4101, "row.columns[0]"},
		{"too large", "POST", "/v1/message/check", "", `{` + alt + `,"template":"` + strings.Repeat("a", 256<<10) + `"}`, 413, 4130, ""},
		{"media type", "POST", "/v1/message/check", "text/plain", `{}`, 415, 4150, ""},
		{"template string not JSON", "POST", "/v1/message/check", "", `{` + alt + `,"template":"{nope"}`, 400, 4100, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			headers := bearer(apiToken)
			if tt.ctype != "" {
				headers["Content-Type"] = tt.ctype
			}
			r := post(t, tester, tt.method, mainSite+tt.path, headers, []byte(tt.body))
			checkRequestID(t, r)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", r.status, tt.status, r.body)
			}
			code, _, details := exportError(t, r)
			if code != tt.code || !strings.Contains(details, tt.details) {
				t.Errorf("code %d details %q, want %d with %q", code, details, tt.code, tt.details)
			}
		})
	}
	// Without a token, nothing about the body is looked at.
	r := post(t, tester, http.MethodPost, mainSite+"/v1/page/check", nil, []byte("not JSON"))
	if code, _, _ := exportError(t, r); r.status != 401 || code != 4001 {
		t.Errorf("no token: %d %d", r.status, code)
	}
}
