package browser

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Selectors of the page (www/index.html) and the stand-in editor.
const (
	headingInput  = `#standin-fields input[name="heading-text"]`
	getHTMLButton = `#get-html`
	getTextButton = `#get-text`
	copyButton    = `#copy-html`
	downloadBtn   = `#download-html`
	resultHTML    = `#result-html`
	resultText    = `#result-text`
	placeholder   = `#result-placeholder`
)

// TestEditorPage walks the page the way a user does, in one browser
// session, against Caddyfile.example: the steps depend on each other (the
// previous result must survive a failed export), so they run in order and
// stop at the first failure.
func TestEditorPage(t *testing.T) {
	env := readEnvExample(t)
	setEnv(t, env, "")
	tester := newTester(t)
	loadConfig(t, tester, exampleConfig(t, nil))

	s := newSession(t)
	downloads := t.TempDir()
	s.run(t,
		browser.GrantPermissions([]browser.PermissionType{
			browser.PermissionTypeClipboardReadWrite,
			browser.PermissionTypeClipboardSanitizedWrite,
		}).WithOrigin(siteURL),
		browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllow).
			WithDownloadPath(downloads).WithEventsEnabled(true),
		// The clipboard API wants a focused document; headless has none.
		emulation.SetFocusEmulationEnabled(true),
	)

	step(t, "page opens with the stand-in editor and the placeholder", func(t *testing.T) {
		s.run(t,
			chromedp.Navigate(siteURL+"/"),
			chromedp.WaitVisible(headingInput),
			waitFor(`!document.querySelector("#get-html").disabled`),
		)
		var got struct {
			Placeholder        string
			PlaceholderVisible bool
			ResultHidden       bool
			Notice             string
			PreviewSandbox     string
		}
		s.run(t, eval(`({
			Placeholder: document.querySelector("#result-placeholder").textContent,
			PlaceholderVisible: document.querySelector("#result-placeholder").checkVisibility(),
			ResultHidden: !document.querySelector("#html-result").checkVisibility() && !document.querySelector("#text-result").checkVisibility(),
			Notice: document.querySelector(".standin-notice").textContent,
			PreviewSandbox: document.querySelector("#standin-preview").getAttribute("sandbox"),
		})`, &got))
		if got.Placeholder != "Export results will appear here." || !got.PlaceholderVisible {
			t.Errorf("placeholder = %q (visible %v), want the contract's text, visible", got.Placeholder, got.PlaceholderVisible)
		}
		if !got.ResultHidden {
			t.Error("a result is shown before any export")
		}
		if !strings.Contains(got.Notice, "Offline stand-in editor") {
			t.Errorf("the stand-in does not say what it is: %q", got.Notice)
		}
		if got.PreviewSandbox != "" {
			t.Errorf("stand-in preview sandbox = %q, want empty (no scripts)", got.PreviewSandbox)
		}
		// The stand-in's live preview is rendered by the content service.
		s.run(t, waitFor(`(document.querySelector("#standin-preview").srcdoc || "").includes("Welcome aboard")`))
		for _, width := range []int64{1280, 390} {
			saveArtifact(t, fmt.Sprintf("start-%d.png", width), pageScreenshot(t, s, width))
		}
		s.run(t, chromedp.EmulateViewport(1280, 900))
	})

	heading := "Spring picnic — bring a friend & a <basket>"
	escaped := "Spring picnic — bring a friend &amp; a &lt;basket&gt;"
	step(t, "edit a heading in the stand-in editor", func(t *testing.T) {
		s.run(t,
			chromedp.Focus(headingInput),
			chromedp.Evaluate(`document.querySelector(`+jsString(headingInput)+`).select()`, nil),
			chromedp.SendKeys(headingInput, kb.Delete),
			chromedp.SendKeys(headingInput, heading),
			waitFor(`(document.querySelector("#standin-preview").srcdoc || "").includes(`+jsString(escaped)+`)`),
		)
	})

	var html string
	step(t, "Get design HTML shows the edited design", func(t *testing.T) {
		html = getDesignHTML(t, s, escaped)
		if !strings.HasPrefix(html, "<!DOCTYPE html>") {
			t.Errorf("result does not start with <!DOCTYPE html>: %.80q", html)
		}
		var got struct {
			Focused                       string
			Status                        string
			PlaceholderHidden             bool
			DesktopSrcdoc, MobileSrcdoc   string
			DesktopSandbox, MobileSandbox string
			DesktopWidth, MobileWidth     int
		}
		s.run(t, eval(`({
			Focused: document.activeElement.id,
			Status: document.querySelector("#status").textContent,
			PlaceholderHidden: !document.querySelector("#result-placeholder").checkVisibility(),
			DesktopSrcdoc: document.querySelector("#preview-desktop").srcdoc,
			MobileSrcdoc: document.querySelector("#preview-mobile").srcdoc,
			DesktopSandbox: document.querySelector("#preview-desktop").getAttribute("sandbox"),
			MobileSandbox: document.querySelector("#preview-mobile").getAttribute("sandbox"),
			DesktopWidth: document.querySelector("#preview-desktop").getBoundingClientRect().width,
			MobileWidth: document.querySelector("#preview-mobile").getBoundingClientRect().width,
		})`, &got))
		if got.Focused != "html-result-title" {
			t.Errorf("focus after the export is on #%s, want #html-result-title", got.Focused)
		}
		if !strings.Contains(got.Status, "Design HTML ready") {
			t.Errorf("status = %q, want an announcement of the result", got.Status)
		}
		if !got.PlaceholderHidden {
			t.Error("placeholder still shown next to the result")
		}
		if got.DesktopSrcdoc != html || got.MobileSrcdoc != html {
			t.Error("the previews do not show the exported HTML")
		}
		if got.DesktopSandbox != "" || got.MobileSandbox != "" {
			t.Errorf("preview sandbox = %q, %q; want empty (no scripts)", got.DesktopSandbox, got.MobileSandbox)
		}
		if got.DesktopWidth != 640 || got.MobileWidth != 375 {
			t.Errorf("preview widths = %d, %d; want 640 and 375", got.DesktopWidth, got.MobileWidth)
		}
		// The page shows exactly what the bridge answered.
		bodies := s.bodiesFor("/v1/message/html")
		if !anyEqual(bodies, html) {
			t.Error("the shown HTML is not a response body of /v1/message/html")
		}
	})

	step(t, "Copy puts exactly the HTML on the clipboard", func(t *testing.T) {
		checkCopy(t, s, html)
	})

	step(t, "Download saves design.html with exactly the HTML", func(t *testing.T) {
		checkDownload(t, s, downloads, html)
	})

	step(t, "the downloaded design.html stands on its own: absolute image URLs that load", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(downloads, "design.html"))
		if err != nil {
			t.Fatal(err)
		}
		srcs := regexp.MustCompile(`<img[^>]*\ssrc="([^"]*)"`).FindAllStringSubmatch(string(data), -1)
		if len(srcs) == 0 {
			t.Fatal("the starter design's export has no image")
		}
		for _, m := range srcs {
			src := m[1]
			if !strings.HasPrefix(src, siteURL+"/designs/img/") {
				t.Errorf("image %q is not absolute on this page's origin", src)
				continue
			}
			res, err := http.Get(src)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Errorf("image %s: HTTP %d", src, res.StatusCode)
			}
		}
	})

	step(t, "image URLs: relative paths resolved, everything else untouched", func(t *testing.T) {
		var failures []string
		s.run(t, eval(`import("/absolute-urls.js").then((m) => {
			const base = "http://host.example/app/";
			return [
				['{"src":"designs/img/a.png"}', '{"src":"http://host.example/app/designs/img/a.png"}'],
				['{"src":"/img/a.png"}', '{"src":"http://host.example/img/a.png"}'],
				['{"image":{"src":"https://cdn.example/a.png","href":"page.html"}}', '{"image":{"src":"https://cdn.example/a.png","href":"page.html"}}'],
				['{"src":"data:image/png;base64,AAAA"}', '{"src":"data:image/png;base64,AAAA"}'],
				['{"src":"$product_reco[1].image_url$"}', '{"src":"$product_reco[1].image_url$"}'],
				['{"src":"{{ logo_url }}"}', '{"src":"{{ logo_url }}"}'],
				['{"src":""}', '{"src":""}'],
				['{"style":{"background-image":"url(\'img/bg.png\')"}}', '{"style":{"background-image":"url(\'http://host.example/app/img/bg.png\')"}}'],
				['{"style":{"background-image":"none"}}', '{"style":{"background-image":"none"}}'],
				['{"icons":[{"image":"img/i.png"}]}', '{"icons":[{"image":"http://host.example/app/img/i.png"}]}'],
				['{ "n": 1.50, "src": "https://x/a.png" }', '{ "n": 1.50, "src": "https://x/a.png" }'],
				['not json', 'not json'],
				// Every other byte as the editor wrote it: a JSON.stringify
				// round trip would round the number and decode the escape.
				['{"id": 12345678901234567890, "n": 1.0, "e": "\\u00e9", "src": "img/a.png"}',
				 '{"id": 12345678901234567890, "n": 1.0, "e": "\\u00e9", "src": "http://host.example/app/img/a.png"}'],
				['{"\\u0073rc":"img/a.png","alt":"src"}', '{"\\u0073rc":"http://host.example/app/img/a.png","alt":"src"}'],
				['{"src":["img/a.png"],"href":"img/a.png","x":{"src":"img\\/b.png"}}', '{"src":["img/a.png"],"href":"img/a.png","x":{"src":"http://host.example/app/img/b.png"}}'],
				['{"title":"a \\"src\\": \\"img/a.png\\"","src":null}', '{"title":"a \\"src\\": \\"img/a.png\\"","src":null}'],
				['{"background":"url( \\"img/bg.png\\" ) no-repeat"}', '{"background":"url(\\"http://host.example/app/img/bg.png\\") no-repeat"}'],
				// A long run of spaces (the old pattern backtracked over it
				// for minutes: this step would not end).
				['{"background-image":"url(' + ' '.repeat(20000) + '"}', '{"background-image":"url(' + ' '.repeat(20000) + '"}'],
			].map(([input, want]) => [m.withAbsoluteImageURLs(input, base), want, input])
			 .filter(([got, want]) => got !== want)
			 .map(([got, want, input]) => input + " gave " + got + ", want " + want);
		})`, &failures))
		for _, f := range failures {
			t.Error(f)
		}
	})

	step(t, "check answers of any shape: listed as far as they make sense, never thrown on", func(t *testing.T) {
		var failures []string
		s.run(t, eval(`import("/checks.js").then((m) => [
				['[{"checks":[null,{"type":"missingAltText","checkStatus":"warning","targets":[null,{"widgetType":"image"}]}]}]', 'warning:No alternative text: image'],
				['[{"checks":[{"type":"__proto__","targets":[{"detailType":"subject"}]}]}]', 'suggestion:__proto__: subject'],
				['[{"checks":[{"type":"missingDetailsEmail","targets":[{"detailType":{"x":1}},7,"s"]}]}]', 'suggestion:Missing email detail: '],
				['[{"checks":[{"type":"overageImageWeight","targets":{},"errored":2}]}]', 'note:2 images could not be weighed.'],
				['[{"checks":null}]', 'note:The check answer could not be read.'],
				['null', 'note:The check answer could not be read.'],
			].map(([input, want]) => {
				let got;
				try {
					got = m.checkItems(input).map((i) => i.level + ":" + i.text).join("|");
				} catch (e) {
					got = "threw " + e;
				}
				return got === want ? "" : input + " gave " + got + ", want " + want;
			}).filter((f) => f))`, &failures))
		for _, f := range failures {
			t.Error(f)
		}
	})

	step(t, "a network failure: alert, and focus returns to the button", func(t *testing.T) {
		dialogs := s.dialogCount()
		s.run(t,
			network.EmulateNetworkConditions(true, 0, -1, -1),
			chromedp.Click(getHTMLButton),
		)
		waitForDialog(t, s, dialogs)
		var after struct {
			Focused string
			HTML    string
		}
		s.run(t,
			waitFor(`!document.querySelector("#get-html").disabled`),
			eval(`({Focused: document.activeElement.id || document.activeElement.localName, HTML: document.querySelector("#result-html").value})`, &after),
			network.EmulateNetworkConditions(false, 0, -1, -1),
		)
		if after.Focused != "get-html" {
			t.Errorf("focus after the network failure is on %s, want #get-html", after.Focused)
		}
		if after.HTML != html {
			t.Error("the previous result did not stay after the network failure")
		}
		s.mu.Lock()
		d := s.dialogs[len(s.dialogs)-1]
		s.mu.Unlock()
		if d.Type != "alert" || !strings.Contains(d.Message, "failed") {
			t.Errorf("dialog %s %q, want an alert that the conversion failed", d.Type, d.Message)
		}
	})

	step(t, "Get plain text", func(t *testing.T) {
		text := getPlainText(t, s, heading)
		for _, want := range []string{"Plan my first box", "https://example.com/plan"} {
			if !strings.Contains(text, want) {
				t.Errorf("plain text lacks %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, "<p>") {
			t.Errorf("plain text holds HTML:\n%s", text)
		}
	})

	step(t, "the HTML result rule holds in the browser for every shared case", func(t *testing.T) {
		checkHTMLResultCases(t, s)
	})

	step(t, "screenshots at 1280 and 390 px", func(t *testing.T) {
		for _, width := range []int64{1280, 390} {
			saveArtifact(t, fmt.Sprintf("editor-%d.png", width), pageScreenshot(t, s, width))
			var overflow int
			s.run(t, eval(`document.documentElement.scrollWidth - document.documentElement.clientWidth`, &overflow))
			if overflow > 0 {
				t.Errorf("at %d px the page scrolls sideways by %d px", width, overflow)
			}
		}
		s.run(t, chromedp.EmulateViewport(1280, 900))
	})

	step(t, "keyboard and labels", func(t *testing.T) {
		checkKeyboardAndLabels(t, s)
	})

	// The content service answers in the JSON wrapper form from here on:
	// a proxy in front of it asks for Accept: application/json.
	wrapper := newWrappingUpstream(t, fmt.Sprintf("http://localhost:%d", contentServicePort))
	step(t, "the same flow with the JSON wrapper response form", func(t *testing.T) {
		setEnv(t, env, wrapper.server.URL)
		loadConfig(t, tester, exampleConfig(t, nil))

		heading2 := "Wrapped heading for the JSON form"
		s.run(t,
			chromedp.Evaluate(`document.querySelector(`+jsString(headingInput)+`).select()`, nil),
			chromedp.SendKeys(headingInput, kb.Delete),
			chromedp.SendKeys(headingInput, heading2),
		)
		html = getDesignHTML(t, s, heading2)
		if !strings.HasPrefix(html, "<!DOCTYPE html>") {
			t.Errorf("wrapped result was not unwrapped: %.80q", html)
		}
		wrapped := false
		for _, body := range s.bodiesFor("/v1/message/html") {
			var w struct {
				Body struct {
					HTML string `json:"html"`
				} `json:"body"`
			}
			if json.Unmarshal(body, &w) == nil && w.Body.HTML == html {
				wrapped = true
			}
		}
		if !wrapped {
			t.Error("the browser received no JSON wrapper holding the shown HTML")
		}
		checkCopy(t, s, html)
		checkDownload(t, s, downloads, html)
		text := getPlainText(t, s, heading2)
		if strings.HasPrefix(strings.TrimSpace(text), "{") {
			t.Errorf("plain text wrapper was not unwrapped: %.80q", text)
		}
		jsonAnswers := 0
		for _, ct := range wrapper.relayed() {
			if strings.HasPrefix(ct, "application/json") {
				jsonAnswers++
			}
		}
		if jsonAnswers < 2 {
			t.Errorf("the content service gave %d JSON answers through the wrapper (%v), want the HTML and the text", jsonAnswers, wrapper.relayed())
		}
	})

	step(t, "a wrong token: alert, and the previous result stays", func(t *testing.T) {
		setEnv(t, env, "")
		loadConfig(t, tester, exampleConfig(t, map[string]string{"token": "wrong-token-for-the-browser-test"}))

		var before string
		s.run(t, chromedp.Value(resultHTML, &before))
		if before != html {
			t.Fatal("the result panel does not show the last result")
		}
		dialogs := s.dialogCount()
		s.run(t, chromedp.Click(getHTMLButton))
		waitForDialog(t, s, dialogs)
		var after struct {
			HTML, Desktop string
			Shown         bool
			Focused       string
		}
		s.run(t,
			waitFor(`!document.querySelector("#get-html").disabled`),
			eval(`({
				HTML: document.querySelector("#result-html").value,
				Desktop: document.querySelector("#preview-desktop").srcdoc,
				Shown: !document.querySelector("#html-result").hidden,
				Focused: document.activeElement.id,
			})`, &after),
		)
		if after.HTML != html || after.Desktop != html || !after.Shown {
			t.Error("the previous result did not stay after the failed conversion")
		}
		if after.Focused != "get-html" {
			t.Errorf("focus after the alert is on #%s, want #get-html", after.Focused)
		}
		s.mu.Lock()
		d := s.dialogs[len(s.dialogs)-1]
		s.mu.Unlock()
		if d.Type != "alert" || !strings.Contains(d.Message, "failed") {
			t.Errorf("dialog %s %q, want an alert that the conversion failed", d.Type, d.Message)
		}
		checkCopy(t, s, html) // Copy still copies the kept result
	})

	step(t, "development layout: the dev server forwards /v1 and /proxy", func(t *testing.T) {
		loadConfig(t, tester, exampleConfig(t, nil))
		s.run(t,
			chromedp.Navigate(devURL+"/"),
			chromedp.WaitVisible(headingInput),
			waitFor(`!document.querySelector("#get-html").disabled`),
		)
		got := getDesignHTML(t, s, "Welcome aboard")
		if !strings.HasPrefix(got, "<!DOCTYPE html>") {
			t.Errorf("dev layout result: %.80q", got)
		}
	})

	step(t, "no secret reached the browser", func(t *testing.T) {
		if n := s.checkNoSecrets(t, env); n < 10 {
			t.Errorf("only %d response bodies were searched; the check saw too little", n)
		}
		if len(s.bodiesFor("/proxy/bee-auth")) == 0 {
			t.Error("the LoginV2 answer was not among the searched bodies")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.errors) > 0 {
			t.Errorf("uncaught exceptions in the page: %v", s.errors)
		}
		if len(s.dialogs) != 2 {
			t.Errorf("%d dialogs opened, want only the network-failure and wrong-token alerts", len(s.dialogs))
		}
	})
}

// step runs one step as a subtest and stops the walk at its first failure.
func step(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, f) {
		t.FailNow()
	}
}

// getDesignHTML presses "Get design HTML" and returns the shown HTML once
// it contains want.
func getDesignHTML(t *testing.T, s *session, want string) string {
	t.Helper()
	var html string
	s.run(t,
		chromedp.Evaluate(`document.querySelector("#result-html").value = ""`, nil),
		chromedp.Click(getHTMLButton),
		waitFor(`!document.querySelector("#html-result").hidden && document.querySelector("#result-html").value.includes(`+jsString(want)+`)`),
		chromedp.Value(resultHTML, &html),
	)
	return html
}

func getPlainText(t *testing.T, s *session, want string) string {
	t.Helper()
	var text string
	s.run(t,
		chromedp.Evaluate(`document.querySelector("#result-text").value = ""`, nil),
		chromedp.Click(getTextButton),
		waitFor(`!document.querySelector("#text-result").hidden && document.querySelector("#result-text").value.includes(`+jsString(want)+`)`),
		chromedp.Value(resultText, &text),
	)
	return text
}

func checkCopy(t *testing.T, s *session, html string) {
	t.Helper()
	var clip string
	s.run(t,
		eval(`navigator.clipboard.writeText("something else")`, nil),
		chromedp.Click(copyButton),
		waitFor(`document.querySelector("#status").textContent.includes("Copied")`),
		eval(`navigator.clipboard.readText()`, &clip),
	)
	if clip != html {
		t.Errorf("clipboard holds %d bytes, want the %d bytes of the result (equal: %v)", len(clip), len(html), clip == html)
	}
}

func checkDownload(t *testing.T, s *session, dir, html string) {
	t.Helper()
	path := filepath.Join(dir, "design.html")
	_ = os.Remove(path)
	var types []string
	s.run(t,
		// Records the type of the Blob the page downloads.
		chromedp.Evaluate(`window.__blobTypes = [];
			if (!window.__wrapped) {
				const create = URL.createObjectURL.bind(URL);
				URL.createObjectURL = (blob) => { window.__blobTypes.push(blob.type); return create(blob); };
				window.__wrapped = true;
			}`, nil),
		chromedp.Click(downloadBtn),
	)
	data := waitForFile(t, path)
	if string(data) != html {
		t.Errorf("design.html has %d bytes, want the %d bytes of the result", len(data), len(html))
	}
	s.run(t, eval(`window.__blobTypes`, &types))
	if len(types) != 1 || types[0] != "text/html;charset=utf-8" {
		t.Errorf("downloaded Blob types %q, want [text/html;charset=utf-8]", types)
	}
}

// pageScreenshot captures the whole page at the given width. The viewport
// is made as tall as the page rather than capturing beyond it, because
// Chromium does not paint sandboxed (out-of-process) frames outside the
// viewport.
func pageScreenshot(t *testing.T, s *session, width int64) []byte {
	t.Helper()
	var height int64
	var png []byte
	s.run(t,
		chromedp.EmulateViewport(width, 900),
		eval(`document.documentElement.scrollHeight`, &height),
	)
	s.run(t,
		chromedp.EmulateViewport(width, height),
		chromedp.Sleep(500*time.Millisecond), // frames repaint at the new size
		chromedp.CaptureScreenshot(&png),
	)
	return png
}

// waitForDialog waits until more than before dialogs have opened (each is
// accepted as it opens).
func waitForDialog(t *testing.T, s *session, before int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for s.dialogCount() <= before {
		if time.Now().After(deadline) {
			t.Fatal("no dialog opened within 15s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkHTMLResultCases runs www/htmlresult.js in the page over
// testdata/htmlresult_cases.json, the table the Go side checks too.
func checkHTMLResultCases(t *testing.T, s *session) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "htmlresult_cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name string `json:"name"`
		Text string `json:"text"`
		HTML string `json:"html"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	var got []string
	// Each case's text is the body's bytes, read as the page reads an
	// answer (Response.text(), whose decoder drops one leading BOM).
	s.run(t, eval(`import("/htmlresult.js").then((m) => Promise.all(`+string(raw)+`.map((c) =>
		new Response(new TextEncoder().encode(c.text)).text().then(m.htmlFromResponseText))))`, &got))
	if len(got) != len(cases) {
		t.Fatalf("%d results for %d cases", len(got), len(cases))
	}
	for i, c := range cases {
		if got[i] != c.HTML {
			t.Errorf("%s: got %q, want %q", c.Name, got[i], c.HTML)
		}
	}
}

// checkKeyboardAndLabels tabs through the page and checks that every
// control is reached and every form field has a label.
func checkKeyboardAndLabels(t *testing.T, s *session) {
	var unlabelled []string
	s.run(t, eval(`[...document.querySelectorAll("input, select, textarea, button, iframe")]
		.filter((el) => el.localName === "button" ? !el.textContent.trim() && !el.getAttribute("aria-label")
			: el.localName === "iframe" ? !el.title
			: el.labels.length === 0 && !el.getAttribute("aria-label"))
		.map((el) => el.id || el.name || el.outerHTML.slice(0, 60))`, &unlabelled))
	if len(unlabelled) > 0 {
		t.Errorf("controls without a label: %v", unlabelled)
	}

	wanted := []string{"standin-starter", "standin-load", "r1c0m0-text", "get-html", "get-text", "copy-html", "download-html"}
	reached := map[string]bool{}
	allReached := func() bool {
		for _, want := range wanted {
			if !reached[want] {
				return false
			}
		}
		return true
	}
	// Chrome starts Tab navigation where the last click or blur left off,
	// which earlier steps decide; focusing the body first makes the walk
	// start at the top of the page whatever came before.
	s.run(t, chromedp.Evaluate(`document.activeElement.blur();
		document.body.tabIndex = -1; document.body.focus(); document.body.removeAttribute("tabindex");
		window.scrollTo(0, 0)`, nil))
	for i := 0; i < 400 && !allReached(); i++ {
		var id string
		s.run(t,
			chromedp.KeyEvent(kb.Tab),
			chromedp.Evaluate(`document.activeElement.id || document.activeElement.name || document.activeElement.localName`, &id),
		)
		reached[id] = true
	}
	for _, want := range wanted {
		if !reached[want] {
			t.Errorf("Tab never reaches #%s", want)
		}
	}
}

func anyEqual(bodies [][]byte, s string) bool {
	for _, b := range bodies {
		if string(b) == s {
			return true
		}
	}
	return false
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestStandInEdits edits every kind of field the stand-in offers on a
// two-column starter design and checks that the edits reach the exported
// HTML and that the page POSTs the full design JSON as application/json.
func TestStandInEdits(t *testing.T) {
	env := loadExample(t, nil)

	s := newSession(t)
	s.run(t,
		chromedp.Navigate(siteURL+"/"),
		chromedp.WaitVisible(headingInput),
		chromedp.SetValue(`#standin-starter`, "designs/product-launch.json"),
		chromedp.Click(`#standin-load`),
		waitFor(`document.querySelector("#standin-fields").textContent.includes("column 2")`),
	)
	s.run(t, waitFor(`(document.querySelector("#standin-preview").srcdoc || "").includes("Trailhead 38")`))
	saveArtifact(t, "standin-two-columns-1280.png", pageScreenshot(t, s, 1280))
	var focused string
	s.run(t, eval(`document.activeElement.id`, &focused))
	if focused != "standin-load" {
		t.Errorf("focus after loading a starter design is on #%s, want #standin-load", focused)
	}

	// Field ids are r<row>c<column>m<module>-<field>; see standin-editor.js.
	edits := []struct{ id, value string }{
		{"r1c0m1-text", "Trailhead 24 Ultralight"},                // heading
		{"r1c0m2-text", "Now in green.\n\nAnd with a new strap."}, // paragraph as text
		{"r1c0m3-label", "Buy the green pack"},                    // button label
		{"r1c0m3-href", "https://example.com/green?ref=mail"},     // button link
		{"r1c1m0-src", "designs/img/pack-green.png"},              // image source
		{"r1c1m0-alt", "The orange pack, now also in green"},      // image alt text
		{"r1c0m3-background", "#123456"},                          // button colour
		{"page-background", "#fedcba"},                            // page colour
		{"r2c0m0-colour", "#aa00aa"},                              // divider colour
	}
	for _, e := range edits {
		s.run(t, eval(`(() => {
			const field = document.getElementById(`+jsString(e.id)+`);
			field.value = `+jsString(e.value)+`;
			field.dispatchEvent(new Event("input", { bubbles: true }));
			return true;
		})()`, nil))
	}
	html := strings.ToLower(getDesignHTML(t, s, "Trailhead 24 Ultralight"))
	for _, want := range []string{
		">now in green.</p>", ">and with a new strap.</p>", "buy the green pack",
		`href="https://example.com/green?ref=mail"`, `alt="the orange pack, now also in green"`,
		"#123456", "#fedcba", "#aa00aa",
	} {
		if !strings.Contains(html, strings.ToLower(want)) {
			t.Errorf("exported HTML lacks %s", want)
		}
	}
	if strings.Count(html, "designs/img/pack-green.png") < 2 {
		t.Error("the edited image source is not in the exported HTML")
	}

	// The stand-in's text helpers, case by case, in the page.
	var helperFailures []string
	s.run(t, eval(`import("/standin-editor.js").then((m) => [
		[m.withText('<p style="font-size: 16px;">Buy</p>', "Sell"), '<p style="font-size: 16px;">Sell</p>'],
		[m.withText('<span class="tinyMce-placeholder">I\'m a new title block</span>', "New"), '<span class="tinyMce-placeholder">New</span>'],
		[m.withText("<strong>Hi</strong> there", "Yo"), "Yo"],
		[m.withText("", "A & <b>"), "A &amp; &lt;b&gt;"],
		[m.withText("<p>{{ first_name }}</p>", "Hi {{ first_name }}"), "<p>Hi {{ first_name }}</p>"],
		[m.textOf('<div class="txtTinyMce-wrapper"><p>Get <em>Started</em></p></div>'), "Get Started"],
		[m.textOf("Fish &amp; chips"), "Fish & chips"],
		[m.paragraphsToText("<p>One<br>line two</p><p>Two</p>"), "One\nline two\n\nTwo"],
		[m.paragraphsToText("bare text"), "bare text"],
		[m.textToParagraphs("One\nline two\n\n\nTwo <3"), "<p>One<br>line two</p><p>Two &lt;3</p>"],
		[m.textToParagraphs("  \n\n "), ""],
		[String(m.isPlainParagraphs("<p>a</p><p>b<br>c</p>")), "true"],
		[String(m.isPlainParagraphs('<p>a <a href="x">link</a></p>')), "false"],
	].filter(([got, want]) => got !== want).map(([got, want]) => got + " != " + want))`, &helperFailures))
	for _, f := range helperFailures {
		t.Error("stand-in text helper: " + f)
	}

	req := s.lastRequest(t, "/v1/message/html")
	if req.method != "POST" || req.contentType != "application/json" {
		t.Errorf("export request: %s with Content-Type %q, want POST application/json", req.method, req.contentType)
	}
	var sent struct {
		Page struct {
			Title string `json:"title"`
			Rows  []struct {
				Columns []json.RawMessage `json:"columns"`
			} `json:"rows"`
		} `json:"page"`
	}
	if err := json.Unmarshal(req.body, &sent); err != nil {
		t.Fatalf("the export body is not JSON: %v", err)
	}
	if sent.Page.Title != "Meet the Trailhead backpack" || len(sent.Page.Rows) != 3 || len(sent.Page.Rows[1].Columns) != 2 {
		t.Errorf("the export body is not the full design (title %q, %d rows)", sent.Page.Title, len(sent.Page.Rows))
	}
	if n := s.checkNoSecrets(t, env); n == 0 {
		t.Error("no response bodies were searched")
	}
}

// TestEditorTokenRefused: when LoginV2 refuses the server's credentials the
// page says the editor could not start, offers no export, and the answer
// carries no secret.
func TestEditorTokenRefused(t *testing.T) {
	env := loadExample(t, map[string]string{"client_secret": "not-the-secret-of-this-app"})

	s := newSession(t)
	var got struct {
		Error               string
		Disabled            bool
		PlaceholderOnly     bool
		StartingMessageGone bool
	}
	s.run(t,
		chromedp.Navigate(siteURL+"/"),
		waitFor(`!document.querySelector("#editor-error").hidden`),
		eval(`({
			Error: document.querySelector("#editor-error-text").textContent,
			Disabled: document.querySelector("#get-html").disabled && document.querySelector("#get-text").disabled,
			PlaceholderOnly: document.querySelector("#result-placeholder").checkVisibility()
				&& !document.querySelector("#html-result").checkVisibility()
				&& !document.querySelector("#text-result").checkVisibility(),
			StartingMessageGone: !document.querySelector("#editor").textContent.includes("Starting"),
		})`, &got),
	)
	t.Logf("shown: %s", got.Error)
	if !strings.Contains(got.Error, "could not start") || !strings.Contains(got.Error, "401") {
		t.Errorf("error shown: %q; want that the editor could not start (HTTP 401)", got.Error)
	}
	if !got.Disabled {
		t.Error("export buttons are enabled without an editor")
	}
	if !got.PlaceholderOnly {
		t.Error("the result panel shows more than the placeholder")
	}
	if !got.StartingMessageGone {
		t.Error(`"Starting the editor…" is still shown after the failure`)
	}
	saveArtifact(t, "editor-error-390.png", pageScreenshot(t, s, 390))
	s.run(t,
		chromedp.Click(`#editor-error-dismiss`),
		waitFor(`document.querySelector("#editor-error").hidden && document.activeElement.id === "editor-title"`),
	)
	if len(s.bodiesFor("/proxy/bee-auth")) == 0 {
		t.Error("the LoginV2 answer was not captured")
	}
	s.checkNoSecrets(t, env)
}
