package bridge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestContentServicesPathsForwarded: the check, PDF and image paths are
// forwarded by default with the server's token; check answers are kept by
// the cache, PDF and image answers never.
func TestContentServicesPathsForwarded(t *testing.T) {
	up := cacheUpstream(t)
	tc := load(t, site(bridgeBlock(up, "cache 1MiB 10m")))
	body := []byte(`{"page":{"rows":[]}}`)
	calls := func() int { return len(up.requests()) }
	for i, p := range []string{"/v1/message/check", "/v1/page/check", "/v1/row/check",
		"/v1/message/pdf", "/v1/page/pdf", "/v1/message/image", "/v1/page/image"} {
		res := post(t, tc, p, body, jsonHeader)
		if res.Status != 200 || calls() != i+1 {
			t.Fatalf("%s: %d, %d upstream calls: %.200s", p, res.Status, calls(), res.Body)
		}
		if got := up.requests()[i]; got.Path != p || got.Header.Get("Authorization") != "Bearer "+tokenPlain {
			t.Errorf("%s forwarded as %s with %q", p, got.Path, got.Header.Get("Authorization"))
		}
	}
	n := calls()
	for _, tt := range []struct {
		path, status string
		calls        int
	}{
		{"/v1/message/check", "design_bridge; hit", n},
		{"/v1/message/pdf", "", n + 1},
		{"/v1/page/image", "", n + 2},
		{"/v1/message/image", "", n + 3},
	} {
		res := post(t, tc, tt.path, body, jsonHeader)
		if res.Status != 200 || res.Header.Get("Cache-Status") != tt.status || calls() != tt.calls {
			t.Errorf("again %s: %d, Cache-Status %q, %d calls; want %q, %d", tt.path, res.Status, res.Header.Get("Cache-Status"), calls(), tt.status, tt.calls)
		}
	}
}

// TestCheckThroughBridge: the Check API of the repository's own
// content_service, through design_bridge.
func TestCheckThroughBridge(t *testing.T) {
	csSite, cs := contentServiceSite(9103, "browser off")
	tc := load(t, site(fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken {env.DB_TEST_TOKEN}\n", cs))+csSite)
	req := `{"checks":[{"category":"missingCopyLink"}],"template":{"page":{"rows":[{"uuid":"r","columns":[{"modules":[` +
		`{"type":"mailup-bee-newsletter-modules-button","uuid":"b","descriptor":{"button":{"label":"Go","href":""}}}]}]}]}}}`
	res := post(t, tc, "/v1/message/check", []byte(req), jsonHeader)
	var ans []struct {
		Status string `json:"status"`
		Checks []struct {
			Type         string `json:"type"`
			TargetsCount int    `json:"targetsCount"`
		} `json:"checks"`
	}
	if res.Status != 200 || json.Unmarshal(res.Body, &ans) != nil || len(ans) != 1 || ans[0].Status != "warning" ||
		ans[0].Checks[0].Type != "missingCopyLink" || ans[0].Checks[0].TargetsCount != 1 {
		t.Fatalf("check: %d %s", res.Status, res.Body)
	}
	// Turned off on the service: its 501 comes through.
	res = post(t, tc, "/v1/message/pdf", []byte(`{"html":"x","page_size":"A4","page_orientation":"portrait"}`), jsonHeader)
	if res.Status != 501 || !strings.Contains(string(res.Body), "turned off") {
		t.Errorf("pdf: %d %s", res.Status, res.Body)
	}
}
