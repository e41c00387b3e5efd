package render

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
)

// The fixture links-os-handlers puts links and sources of schemes that
// hand the URL to a program of the reader's system (file:, ms-msdt:,
// search-ms:, ms-word:, smb:, jar:, intent:…), all to attacker.example,
// in every place a design holds a URL: buttons, image links and sources,
// rich text links, images and styles, menu items, social and icon
// lists, a video, row and body backgrounds, and an html block. Beside
// them, links the renderer keeps (web, mail, phone, merge tags, anchors).
const osHandlersFixture = "testdata/fixtures/links-os-handlers.json"

// osHandlerKept are links of the fixture's rich text that every output
// keeps as written.
var osHandlerKept = []string{"https://example.com/ok", "mailto:hi@example.com", "tel:+15550100",
	"{{link}}", "[unsubscribe]", "$url$", "www.example.com"}

// TestOSHandlerSchemesLeftOut: no layout of the HTML and not the plain
// text holds one of the fixture's attacker.example URLs, but for the
// html block's HTML, which is passed through as written.
func TestOSHandlerSchemesLeftOut(t *testing.T) {
	data, err := os.ReadFile(osHandlersFixture)
	if err != nil {
		t.Fatal(err)
	}
	d, err := design.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var htmlBlock string
	for _, m := range d.Page.Rows[0].Columns[0].Modules {
		if m.Kind == design.KindHTML {
			htmlBlock = m.Descriptor.At("html", "html").Text()
		}
	}
	passed := strings.Count(htmlBlock, "attacker.example")
	if passed == 0 {
		t.Fatal("the fixture's html block holds no attacker.example link")
	}
	for _, layout := range []Layout{LayoutEmail, LayoutPage, LayoutPopup} {
		out, err := HTMLWithLimits(d, Limits{Layout: layout})
		if err != nil {
			t.Fatal(err)
		}
		body := string(out.Body)
		if !strings.Contains(body, htmlBlock) {
			t.Errorf("%s: the html block is not passed through as written", layout)
		}
		if n := strings.Count(body, "attacker.example"); n != passed {
			rest := strings.Replace(body, htmlBlock, "", 1)
			i := strings.Index(rest, "attacker.example")
			t.Errorf("%s: %d attacker.example URLs, want only the html block's %d; the first: …%s…",
				layout, n, passed, rest[max(0, i-120):min(len(rest), i+60)])
		}
		for _, href := range osHandlerKept {
			if !strings.Contains(body, `href="`+escapeString(href)+`"`) {
				t.Errorf("%s: link %q missing", layout, href)
			}
		}
	}

	out, err := PlainText(d)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out.Body)
	if i := strings.Index(text, "attacker.example"); i >= 0 {
		t.Errorf("plain text holds an attacker.example URL: …%s…", text[max(0, i-80):min(len(text), i+40)])
	}
	for _, href := range append(osHandlerKept, "https://example.com/ok-html") {
		if !strings.Contains(text, href) {
			t.Errorf("plain text: link %q missing", href)
		}
	}

	// Read as a browser reads it, the document (its html block left
	// out) holds no URL of a scheme outside the allowed ones.
	checkInertRender(t, inertDesign(t, data), "links-os-handlers")
}

// escapeString is s escaped as the renderer escapes an attribute value.
func escapeString(s string) string {
	var b bytes.Buffer
	escape(&b, s)
	return b.String()
}
