package corpus

import (
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"testing"
)

// TestVendorHTMLLayout runs the layout checks on HTML the vendor's own
// renderer exported. It validates the harness: the probe must find rows
// and columns in real vendor markup, and markup known to be responsive
// must pass. Expectations come from the markup itself (class "stack",
// "no_stack", tr.reverse).
func TestVendorHTMLLayout(t *testing.T) {
	requireCorpus(t)
	base := startCaddy(t)
	tb := sharedTab(t)

	type page struct{ set, file string }
	var pages []page
	for _, set := range []string{"vendor", "pairs"} {
		dir := map[string]string{"vendor": "exported-html", "pairs": "pairs"}[set]
		files, err := filepath.Glob(filepath.Join(corpusDir, dir, "*.html"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no HTML in %s", filepath.Join(corpusDir, dir))
		}
		sort.Strings(files)
		for _, f := range files {
			pages = append(pages, page{set, filepath.Base(f)})
		}
	}

	rowsSeen := 0
	for _, p := range pages {
		t.Run(p.set+"/"+p.file, func(t *testing.T) {
			m, _ := checkPage(t, tb, base+"/"+p.set+"/"+url.PathEscape(p.file), map[string]string{"vendor": "vendor-exported", "pairs": "vendor-pairs"}[p.set], p.file, desktopWidth, markupExpectation)
			rowsSeen += len(m.Rows)
		})
	}
	// A probe that finds no rows would pass every layout check vacuously.
	if rowsSeen < 50 {
		t.Errorf("the probe found only %d rows in the vendor HTML; the row/column selectors no longer match", rowsSeen)
	}
}

// markupExpectation reads a row's mobile behaviour from the vendor's
// classes.
func markupExpectation(r rowProbe) (rowExpectation, bool) {
	return rowExpectation{stack: r.Stack, reverse: r.Reverse}, true
}

// checkPage opens pageURL at phone width, checks and screenshots it, then
// does the same at the desktop width wide. It returns both measurements.
func checkPage(t *testing.T, tb *tab, pageURL, set, name string, wide int, expect expectFunc) (mobile, desktop *measurement) {
	t.Helper()
	if err := tb.setWidth(mobileWidth); err != nil {
		t.Fatal(err)
	}
	if err := tb.open(pageURL); err != nil {
		// Tell a server-side failure from a browser-side one.
		status := "no response"
		if resp, gerr := http.Get(pageURL); gerr == nil {
			status = resp.Status
			resp.Body.Close()
		}
		t.Fatalf("opening %s: %v (a plain GET now answers: %s)", pageURL, err, status)
	}
	mobile, err := tb.measure()
	if err != nil {
		t.Fatalf("measuring at %d px: %v", mobileWidth, err)
	}
	if mobile.VW != mobileWidth {
		t.Fatalf("viewport is %.0f px wide, want %d", mobile.VW, mobileWidth)
	}
	if err := tb.screenshot(artifactName(set, name, mobileWidth)); err != nil {
		t.Errorf("screenshot: %v", err)
	}
	if ps := checkMobile(mobile, expect); len(ps) > 0 {
		t.Errorf("at %d px:%s", mobileWidth, joinProblems(ps))
	}

	// The narrowest phones in use: nothing may overflow there either.
	if err := tb.setWidth(narrowWidth); err != nil {
		t.Fatal(err)
	}
	narrow, err := tb.measure()
	if err != nil {
		t.Fatalf("measuring at %d px: %v", narrowWidth, err)
	}
	if ps := checkOverflow(narrow); len(ps) > 0 {
		t.Errorf("at %d px:%s", narrowWidth, joinProblems(ps))
	}

	if err := tb.setWidth(wide); err != nil {
		t.Fatal(err)
	}
	desktop, err = tb.measure()
	if err != nil {
		t.Fatalf("measuring at %d px: %v", wide, err)
	}
	if err := tb.screenshot(artifactName(set, name, wide)); err != nil {
		t.Errorf("screenshot: %v", err)
	}
	if ps := checkDesktop(desktop, expect); len(ps) > 0 {
		t.Errorf("at %d px:%s", wide, joinProblems(ps))
	}
	return mobile, desktop
}
