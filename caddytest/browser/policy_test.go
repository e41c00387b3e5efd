package browser

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// recordViolations is run in every document before its own scripts: it
// keeps the page's Content-Security-Policy violations in
// window.__violations ("directive blocked-URI").
const recordViolations = `window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) =>
	window.__violations.push(e.effectiveDirective + " " + e.blockedURI));`

// designScript is an html block whose script and event handler, if they
// ever run, ask the site for /design-script-ran and, on the page's
// origin, say so in the page's window.__ran.
const designScript = `<p>Hand-made block</p>` +
	`<script>new Image().src = "/design-script-ran"; top.__ran = (top.__ran || []).concat("script")</script>` +
	`<img src="data:," alt="" onerror="new Image().src = '/design-script-ran'; top.__ran = (top.__ran || []).concat('handler')">`

// TestPagePolicy: the example serves the page with a
// Content-Security-Policy that lets only the site's own scripts run. The
// page works under it (a user's walk through the exports meets no
// violation), and a design's script, which the HTML export holds and the
// previews keep in sandboxed frames, does not run on the page's origin
// either where the HTML is shown in a frame without a sandbox or put into
// the page itself: the second line behind the sandbox.
func TestPagePolicy(t *testing.T) {
	loadExample(t, nil)

	// The first starter design with an html block holding designScript.
	starter := starterWithBlock(t, designScript, false)

	s := newSession(t)
	s.run(t,
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := page.AddScriptToEvaluateOnNewDocument(recordViolations).Do(ctx)
			return err
		}),
		serveStarter(s, starter),
		chromedp.Navigate(siteURL+"/"),
		chromedp.WaitVisible(headingInput),
		waitFor(`!document.querySelector("#get-html").disabled`),
	)
	html := getDesignHTML(t, s, "Hand-made block")
	if !strings.Contains(html, "<script>new Image().src = \"/design-script-ran\"") {
		t.Fatalf("the export does not hold the design's script; nothing is tested: %.200q", html)
	}
	getPlainText(t, s, "Hand-made block")
	s.run(t,
		waitFor(`document.querySelector("#checks-summary").textContent !== "Checking…"`),
		// The previews' frames have loaded the HTML.
		chromedp.Sleep(500*time.Millisecond),
	)

	if policy := s.documentHeader(siteURL+"/", "Content-Security-Policy"); !strings.Contains(policy, "script-src 'self'") {
		t.Errorf("the page's Content-Security-Policy is %q; want one with script-src 'self'", policy)
	}
	var violations, ran []string
	s.run(t, eval(`window.__violations`, &violations), eval(`window.__ran || []`, &ran))
	if len(violations) > 0 {
		t.Errorf("the page broke its own policy: %q", violations)
	}
	if len(ran) > 0 || s.requested("/design-script-ran") {
		t.Fatalf("the design's script ran in a preview (on the page's origin: %q)", ran)
	}

	// Shown as a page of the site would show it without the sandbox: in
	// a frame of its own origin, and put into the page.
	s.run(t,
		eval(`new Promise((done) => {
			const frame = document.createElement("iframe");
			frame.onload = () => setTimeout(done, 300);
			frame.srcdoc = document.querySelector("#result-html").value;
			document.body.append(frame);
		})`, nil),
		eval(`document.querySelector("#export").insertAdjacentHTML("beforeend", document.querySelector("#result-html").value)`, nil),
		chromedp.Sleep(500*time.Millisecond),
		eval(`window.__ran || []`, &ran),
		eval(`window.__violations`, &violations),
	)
	if len(ran) > 0 || s.requested("/design-script-ran") {
		t.Errorf("the design's script ran outside the sandbox (on the page's origin: %q)", ran)
	}
	if !strings.Contains(strings.Join(violations, "\n"), "script-src-attr") {
		t.Errorf("the policy reported no blocked event handler in the page (violations %q): the check saw nothing", violations)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errors) > 0 {
		t.Errorf("uncaught exceptions in the page: %v", s.errors)
	}
}
