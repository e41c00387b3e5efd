package browser

import (
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// fakeVendorSDK stands in for the vendor's SDK module: it records what the
// page hands it and plays an editor session (a change, an expired token, an
// error).
const fakeVendorSDK = `
export default class FakeBeefreeSDK {
  constructor(token) {
    window.__vendor = { tokens: [token], updated: [] };
  }
  async start(config, template) {
    const v = window.__vendor;
    v.config = { container: config.container, trackChanges: config.trackChanges, uid: config.uid };
    v.templateTitle = template.page.title;
    document.getElementById(config.container).textContent = "Vendor editor (test double)";
    const changed = structuredClone(template);
    changed.page.rows[1].columns[0].modules[0].descriptor.heading.text = "Changed in the vendor editor";
    config.onChange(JSON.stringify(changed), { code: 1000 });
    config.onError({ code: 5101, message: "expired token cannot be refreshed" });
  }
  updateToken(token) {
    window.__vendor.updated.push(token);
  }
}
`

// TestVendorSDKSetting switches config.js to the vendor's SDK (by serving a
// modified config.js to the browser), and the page's policy to the script
// sources Caddyfile.example names for it, and checks that the page loads
// the SDK from the configured URL and drives it through the contract's
// surface.
func TestVendorSDKSetting(t *testing.T) {
	env := readEnvExample(t)
	setEnv(t, env, "")
	tester := newTester(t)

	configJS, err := os.ReadFile(filepath.Join(repoRoot, "www", "config.js"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`vendorSdkUrl:\s*"([^"]+)"`).FindSubmatch(configJS)
	if m == nil {
		t.Fatal("www/config.js has no vendorSdkUrl")
	}
	sdkURL := string(m[1])

	// The page's policy as the example's comment says to set it for the
	// vendor's SDK.
	caddyfile := exampleConfig(t, nil)
	sources := regexp.MustCompile(`(?m)^#\s+(script-src 'self' [^\n]+)$`).FindStringSubmatch(caddyfile)
	if sources == nil {
		t.Fatal("Caddyfile.example does not say which script sources the vendor's SDK needs")
	}
	if u, err := url.Parse(sdkURL); err != nil || !strings.Contains(sources[1]+" ", " "+u.Scheme+"://"+u.Host+" ") {
		t.Fatalf("Caddyfile.example's script sources for the vendor (%s) leave out vendorSdkUrl's origin (%s)", sources[1], sdkURL)
	}
	const pagePolicy = `"script-src 'self';`
	if strings.Count(caddyfile, pagePolicy) != 1 {
		t.Fatalf("Caddyfile.example has %d page policies starting %s, want 1", strings.Count(caddyfile, pagePolicy), pagePolicy)
	}
	loadConfig(t, tester, strings.Replace(caddyfile, pagePolicy, `"`+sources[1]+";", 1))
	const standIn, vendor = `editor: "stand-in"`, `editor: "vendor"`
	if !strings.Contains(string(configJS), standIn) {
		t.Fatalf("www/config.js does not select the stand-in by default (%s)", standIn)
	}
	vendorConfig := strings.Replace(string(configJS), standIn, vendor, 1)

	s := newSession(t)
	served := map[string]bool{}
	chromedp.ListenTarget(s.ctx, func(ev any) {
		paused, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		var body, contentType string
		switch {
		case strings.HasSuffix(paused.Request.URL, "/config.js"):
			body, contentType = vendorConfig, "text/javascript"
		case paused.Request.URL == sdkURL:
			body, contentType = fakeVendorSDK, "text/javascript"
		default:
			go func() { _ = chromedp.Run(s.ctx, fetch.ContinueRequest(paused.RequestID)) }()
			return
		}
		s.mu.Lock()
		served[paused.Request.URL] = true
		s.mu.Unlock()
		go func() {
			_ = chromedp.Run(s.ctx, fetch.FulfillRequest(paused.RequestID, 200).
				WithResponseHeaders([]*fetch.HeaderEntry{
					{Name: "Content-Type", Value: contentType},
					{Name: "Access-Control-Allow-Origin", Value: "*"},
					{Name: "Cache-Control", Value: "no-store"},
				}).
				WithBody(base64.StdEncoding.EncodeToString([]byte(body))))
		}()
	})
	s.run(t,
		network.SetCacheDisabled(true),
		fetch.Enable().WithPatterns([]*fetch.RequestPattern{
			{URLPattern: "*/config.js"},
			{URLPattern: sdkURL},
		}),
		chromedp.Navigate(siteURL+"/"),
		waitFor(`window.__vendor && window.__vendor.updated.length > 0`),
		waitFor(`!document.querySelector("#get-html").disabled`),
	)
	s.mu.Lock()
	if !served[sdkURL] {
		t.Errorf("the page did not load the SDK from %s", sdkURL)
	}
	s.mu.Unlock()

	var got struct {
		Container      string
		TrackChanges   bool
		UID            string
		TemplateTitle  string
		Token, Updated string
		StandIn        bool
		EditorText     string
		ErrorShown     bool
	}
	s.run(t, eval(`({
		Container: __vendor.config.container,
		TrackChanges: __vendor.config.trackChanges,
		UID: __vendor.config.uid,
		TemplateTitle: __vendor.templateTitle,
		Token: __vendor.tokens[0].access_token,
		Updated: __vendor.updated[0].access_token,
		StandIn: !!document.querySelector(".standin"),
		EditorText: document.querySelector("#editor").textContent,
		ErrorShown: !document.querySelector("#editor-error").hidden,
	})`, &got))
	if got.Container != "editor" || !got.TrackChanges || got.UID != "demo-user" {
		t.Errorf("start config = %+v; want container editor, trackChanges true, uid demo-user", got)
	}
	if got.TemplateTitle != "Welcome to Northwind Pantry" {
		t.Errorf("initial design title %q, want the first starter design", got.TemplateTitle)
	}
	if got.Token == "" || got.Updated == "" || got.Updated == got.Token {
		t.Error("the SDK did not get a token, or did not get a fresh one after the expired-token error (5101)")
	}
	if got.StandIn || got.EditorText != "Vendor editor (test double)" {
		t.Error("the stand-in editor ran although config.js selects the vendor's SDK")
	}
	if got.ErrorShown {
		t.Error("the expired-token error was shown instead of being handled with updateToken")
	}

	// The export sends what the vendor's onChange delivered.
	html := getDesignHTML(t, s, "Changed in the vendor editor")
	if !strings.HasPrefix(html, "<!DOCTYPE html>") {
		t.Errorf("export: %.80q", html)
	}
	if n := s.checkNoSecrets(t, env); n == 0 {
		t.Error("no response bodies were searched")
	}
}
