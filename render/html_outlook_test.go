package render

import (
	"os"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// clientView returns the markup a client sees after comments, parsed as
// each parses them. Every client but Outlook for Windows (mso) reads
// HTML comments: each ends at the first "-->", so <!--[if mso]>…<![endif]-->
// is dropped and the content of <!--[if !mso]><!-->…<!--<![endif]--> kept.
// Outlook reads conditional comments: it keeps the content of one whose
// condition holds for it (mso, gte mso 9) and drops the end marker where
// it meets it; for one whose condition does not (!mso) it drops
// everything up to the first <![endif] it meets, and the "-->" after it,
// whichever comment that <![endif] belongs to: conditional comments do
// not nest. Other comments it drops whole.
func clientView(doc string, mso bool) string {
	var b strings.Builder
	for {
		i := strings.Index(doc, "<!--")
		if e := strings.Index(doc, "<![endif]-->"); mso && e >= 0 && (i < 0 || e < i) {
			i = e // the end of a conditional comment whose content Outlook kept
		}
		if i < 0 {
			b.WriteString(doc)
			return b.String()
		}
		b.WriteString(doc[:i])
		doc = doc[i:]
		switch {
		case !mso || !strings.HasPrefix(doc, "<!--[if ") && !strings.HasPrefix(doc, "<![endif]"):
			end := strings.Index(doc, "-->")
			if end < 0 {
				return b.String() + "<!--unterminated-->"
			}
			doc = doc[end+len("-->"):]
		case strings.HasPrefix(doc, "<![endif]"):
			doc = doc[len("<![endif]-->"):]
		default:
			open := strings.Index(doc, "]>")
			if open < 0 {
				return b.String() + "<!--unterminated-->"
			}
			if cond := doc[len("<!--[if "):open]; !strings.HasPrefix(cond, "!") {
				doc = doc[open+len("]>"):]
				continue
			}
			end := strings.Index(doc, "<![endif]")
			if end < 0 {
				return b.String() + "<!--unterminated-->"
			}
			doc = doc[end:]
			close := strings.Index(doc, "-->")
			doc = doc[close+len("-->"):]
		}
	}
}

// checkBalanced checks that layout elements open and close in equal
// numbers in one client's view (a broken ghost table would not).
func checkBalanced(t *testing.T, view, client string) {
	t.Helper()
	if strings.Contains(view, "<!--unterminated-->") {
		t.Errorf("%s view: unterminated conditional comment", client)
	}
	for _, tag := range []string{"table", "tr", "td", "div", "a", "v:roundrect", "v:rect"} {
		opens := strings.Count(view, "<"+tag+" ") + strings.Count(view, "<"+tag+">")
		closes := strings.Count(view, "</"+tag+">")
		if opens != closes {
			t.Errorf("%s view: %d <%s> but %d </%s>", client, opens, tag, closes, tag)
		}
	}
}

func TestClientViewsBalanced(t *testing.T) {
	for name, data := range designtest.OwnAndCorpus(t, true) {
		t.Run(name, func(t *testing.T) {
			// HTML blocks pass through as written and may be unbalanced
			// themselves; only check documents without them.
			skipHTMLBlocks(t, data)
			out := string(renderForTest(t, data))
			checkBalanced(t, clientView(out, true), "Outlook")
			checkBalanced(t, clientView(out, false), "non-Outlook")
		})
	}
}

// skipHTMLBlocks skips a design with an html block, by the design (its
// rich text may give the block's class to anything).
func skipHTMLBlocks(t *testing.T, data []byte) {
	t.Helper()
	d, err := design.Decode(data)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if htmlModules(d) > 0 {
		t.Skip("has a pass-through HTML block")
	}
}

// msoStyle is the one <style> element only Outlook for Windows reads. It
// stays apart from the head's <style> (docs/renderer.md): its
// "font-size:100%!important" undoes the head's 75 % for Outlook, which
// already sets <sup> and <sub> smaller, and would set them full size in
// every other client.
const msoStyle = `<!--[if mso]><style>sup,sub{font-size:100%!important}sup{mso-text-raise:10%}sub{mso-text-raise:-10%}</style><![endif]-->`

// TestEmailStyleElements: every client but Outlook for Windows sees one
// <style> element, in the head, whatever the design (html blocks pass
// their own through); Outlook sees that one and msoStyle.
func TestEmailStyleElements(t *testing.T) {
	for name, data := range designtest.OwnAndCorpus(t, true) {
		t.Run(name, func(t *testing.T) {
			skipHTMLBlocks(t, data)
			out := string(renderForTest(t, data))
			head, _, ok := strings.Cut(out, "</head>")
			if !ok {
				t.Fatal("no </head>")
			}
			if n := strings.Count(clientView(out, false), "<style"); n != 1 {
				t.Errorf("non-Outlook view: %d <style> elements, want 1", n)
			}
			if n := strings.Count(clientView(out, true), "<style"); n != 2 {
				t.Errorf("Outlook view: %d <style> elements, want 2", n)
			}
			if strings.Count(head, msoStyle) != 1 || strings.Count(out, "<style") != 2 {
				t.Errorf("the head's Outlook-only <style> is not %s", msoStyle)
			}
		})
	}
}

// TestOutlookSeesNoDesktopHiddenContent: content hidden on desktop is
// out of Outlook's view entirely, also where it holds Outlook markup of
// its own (ghost tables of columns, a button's VML, a video's fallback):
// that markup's <![endif] would otherwise end the wrapper early for
// Outlook, which then shows the rest. Other clients keep all of it.
func TestOutlookSeesNoDesktopHiddenContent(t *testing.T) {
	for _, tc := range []struct {
		fixture       string
		hidden, shown []string
	}{
		{"row-visibility", []string{"Row hidden on desktop", "Module hidden on desktop"}, []string{"Row hidden on mobile"}},
		{"row-desktop-hidden-outlook", []string{"Mobile only, left", "Mobile only, right", "Block hidden on desktop too", "v:roundrect"}, []string{"Shown everywhere", "Shown too"}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			data, err := os.ReadFile("testdata/fixtures/" + tc.fixture + ".json")
			if err != nil {
				t.Fatal(err)
			}
			out := string(renderForTest(t, data))
			outlook, other := clientView(out, true), clientView(out, false)
			for _, s := range tc.hidden {
				if strings.Contains(outlook, s) {
					t.Errorf("Outlook sees %q, hidden on desktop", s)
				}
				if s != "v:roundrect" && !strings.Contains(other, s) {
					t.Errorf("other clients lose %q", s)
				}
			}
			for _, s := range tc.shown {
				if !strings.Contains(outlook, s) || !strings.Contains(other, s) {
					t.Errorf("%q is not shown to every client", s)
				}
			}
			checkBalanced(t, outlook, "Outlook")
			checkBalanced(t, other, "non-Outlook")
		})
	}
}

func TestWithoutOutlookMarkup(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`<table><!--[if mso]><td width="10"><![endif]--><tr>`, `<table><tr>`},
		{`<!--[if mso]>X<![endif]--><!--[if !mso]><!-->Y<!--<![endif]-->Z`, `YZ`},
		{`<!--[if gte mso 9]><v:rect><![endif]-->in<!--[if gte mso 9]></v:rect><![endif]-->`, `in`},
		// An html block's own markup: an attribute value is not a comment.
		{`<div title="<!--[if mso]>">KEEP</div><!--[if mso]>x<![endif]-->`, `<div title="&lt;!--[if mso]>">KEEP</div>`},
		{`<div title='a<![endif]-->b'>KEEP</div>`, `<div title='a&lt;![endif]-->b'>KEEP</div>`},
		{`<p class=it's>x</p>`, `<p class=it's>x</p>`},
		// Comments and bogus comments the other clients do not show.
		{`<p>a</p><!--<![endif]-->b`, `<p>a</p>b`},
		{`<!-- note -->c`, `c`},
		{`<!-->e<!--->f`, `ef`},
		{`<![endif]>d`, `d`},
		{`a < b <3`, `a < b <3`},
		// The text of a style or script is not markup.
		{`<style type="text/css"><!-- .x{color:red} --></style><!-- c -->`, `<style type="text/css"><!-- .x{color:red} --></style>`},
		{`<SCRIPT>if (a<b) {}</script>x`, `<SCRIPT>if (a<b) {}</script>x`},
		{`<styles><!-- c -->`, `<styles>`},
		// A comment that does not end is text; a tag that does not end
		// is kept.
		{`a<!--[if mso]>x`, `a&lt;!--[if mso]>x`},
		{`a<!-- x`, `a&lt;!-- x`},
		{`<![endif]`, `&lt;![endif]`},
		{`a<div title="x`, `a<div title="x`},
		{`<div <![endif] x>`, `<div &lt;![endif] x>`},
	} {
		if got := string(withoutOutlookMarkup([]byte(tc.in))); got != tc.want {
			t.Errorf("withoutOutlookMarkup(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestOutlookSeesNoHiddenHTMLBlock: an html block in content hidden on
// desktop keeps its markup for the clients that show it, even where its
// attribute values hold comment markers, and a stray <![endif] of its own
// no longer ends the section's wrapper for Outlook.
func TestOutlookSeesNoHiddenHTMLBlock(t *testing.T) {
	const hidden = `{"page":{"body":{"container":{"style":{}},"content":{"style":{},"computedStyle":{}}},"rows":[
	 {"container":{"style":{}},"content":{"style":{},"computedStyle":{"hideContentOnDesktop":true}},"columns":[{"grid-columns":12,"modules":[
	  {"type":"mailup-bee-newsletter-modules-html","descriptor":{"html":{"html":"<div title=\"<!--[if mso]>\">KEEPME</div><!--<![endif]-->AFTER"}}},
	  {"type":"mailup-bee-newsletter-modules-button","descriptor":{"button":{"label":"<p>GO</p>","href":"https://example.com/"}}}]}]}]}}`
	out := string(renderForTest(t, []byte(hidden)))
	outlook, other := clientView(out, true), clientView(out, false)
	for _, s := range []string{"KEEPME", "AFTER", "GO"} {
		if strings.Contains(outlook, s) {
			t.Errorf("Outlook sees %q, hidden on desktop", s)
		}
		if !strings.Contains(other, s) {
			t.Errorf("other clients lose %q", s)
		}
	}
	if !strings.Contains(out, `<div title="&lt;!--[if mso]>">KEEPME</div>`) {
		t.Error("the html block's attribute is not kept (with its < written as &lt;)")
	}
}

// FuzzWithoutOutlookMarkup: whatever an html block holds, the cleaned
// hidden content has no comment and no <![endif] left for Outlook to read
// as the end of its wrapper (but in the text of a style or script, which
// is kept as it is), and no '<' more than it had.
func FuzzWithoutOutlookMarkup(f *testing.F) {
	for _, s := range []string{
		`<table><!--[if mso]><td><![endif]--><tr>`,
		`<!--[if mso]>X<![endif]--><!--[if !mso]><!-->Y<!--<![endif]-->`,
		`<div title="<!--[if mso]>">K</div><!--<![endif]-->`,
		`<style><!-- a --></style><![endif]>`,
		`<p class=a'b>x</p><!-- c`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := string(withoutOutlookMarkup([]byte(in)))
		if strings.Count(out, "<") > strings.Count(in, "<") {
			t.Fatalf("more '<' out than in: %q -> %q", in, out)
		}
		low := strings.ToLower(in)
		for _, raw := range []string{"<style", "<script", "<textarea", "<title"} {
			if strings.Contains(low, raw) {
				return
			}
		}
		if strings.Contains(out, "<![endif]") || strings.Contains(out, "<!--") {
			t.Fatalf("%q -> %q: a comment marker is left", in, out)
		}
	})
}
