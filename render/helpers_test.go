package render

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/inventory"
)

// checkInventoryInOutput fails t for every text run, link href and image
// src of the design that the rendered document does not contain.
func checkInventoryInOutput(t *testing.T, d *design.Design, body []byte) {
	t.Helper()
	c := parseDoc(t, body)
	inv := inventory.Of(d)
	for _, s := range inv.Texts {
		if !strings.Contains(c.text, s) {
			t.Errorf("text run missing from output: %q", s)
		}
	}
	for _, h := range inv.Hrefs {
		if !c.hrefs[h] {
			t.Errorf("href missing from output: %q", h)
		}
	}
	for _, s := range inv.Srcs {
		if !c.srcs[s] {
			t.Errorf("src missing from output: %q", s)
		}
	}
}

func renderForTest(t testing.TB, data []byte) []byte {
	t.Helper()
	_, out := renderDesign(t, data, Limits{})
	return out.Body
}

// renderDesign decodes data and renders it within lim.
func renderDesign(t testing.TB, data []byte, lim Limits) (*design.Design, *Output) {
	t.Helper()
	d, err := design.Decode(data)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	out, err := HTMLWithLimits(d, lim)
	if err != nil {
		t.Fatalf("HTML: %v", err)
	}
	return d, out
}

// checkInert reports what in the element n could run script: an element
// that runs or embeds anything, an event handler, a URL of an unsafe
// scheme, a script URL in a style.
func checkInert(t *testing.T, n *html.Node) {
	t.Helper()
	switch n.DataAtom {
	case atom.Script, atom.Iframe, atom.Object, atom.Embed, atom.Form, atom.Input:
		t.Errorf("forbidden element <%s>", n.Data)
	}
	for _, a := range n.Attr {
		if strings.HasPrefix(a.Key, "on") {
			t.Errorf("event handler %s on <%s>", a.Key, n.Data)
		}
		if (a.Key == "href" || a.Key == "src") && !design.SafeURL(a.Val) {
			t.Errorf("unsafe URL %s=%q", a.Key, a.Val)
		}
		if a.Key == "style" && strings.Contains(strings.ToLower(a.Val), "javascript:") {
			t.Errorf("script URL in style %q", a.Val)
		}
	}
}

// inEachLayout decodes the design doc and renders it as an email, a page
// and a popup, handing each output to check. It returns the design.
func inEachLayout(t *testing.T, doc string, check func(layout Layout, out *Output)) *design.Design {
	t.Helper()
	d, err := design.Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, layout := range []Layout{LayoutEmail, LayoutPage, LayoutPopup} {
		out, err := HTMLWithLimits(d, Limits{Layout: layout})
		if err != nil {
			t.Fatalf("%s: %v", layout, err)
		}
		check(layout, out)
	}
	return d
}

// checkWarnings fails t unless out's warnings are want, in order.
func checkWarnings(t *testing.T, layout Layout, out *Output, want []string) {
	t.Helper()
	if strings.Join(out.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: warnings\n got %q\nwant %q", layout, out.Warnings, want)
	}
}
