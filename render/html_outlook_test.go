package render

import (
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// clientView returns the markup a client sees after conditional
// comments: Outlook for Windows (mso) unwraps <!--[if mso]>…<![endif]-->
// (and "gte mso 9") and drops <!--[if !mso]><!-->…<!--<![endif]-->;
// every other client keeps the latter and ignores the former.
func clientView(doc string, mso bool) string {
	var b strings.Builder
	for {
		i := strings.Index(doc, "<!--[if ")
		if i < 0 {
			b.WriteString(doc)
			return b.String()
		}
		b.WriteString(doc[:i])
		doc = doc[i:]
		if strings.HasPrefix(doc, "<!--[if !mso]><!-->") {
			end := strings.Index(doc, "<!--<![endif]-->")
			if end < 0 {
				return b.String() + "<!--unterminated-->"
			}
			if !mso {
				b.WriteString(doc[len("<!--[if !mso]><!-->"):end])
			}
			doc = doc[end+len("<!--<![endif]-->"):]
			continue
		}
		open := strings.Index(doc, "]>")
		end := strings.Index(doc, "<![endif]-->")
		if open < 0 || end < 0 || end < open {
			return b.String() + "<!--unterminated-->"
		}
		if mso {
			b.WriteString(doc[open+2 : end])
		}
		doc = doc[end+len("<![endif]-->"):]
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
			out := string(renderForTest(t, data))
			// HTML blocks pass through as written and may be unbalanced
			// themselves; only check documents without them.
			if strings.Contains(out, `class="html_block`) {
				t.Skip("has a pass-through HTML block")
			}
			checkBalanced(t, clientView(out, true), "Outlook")
			checkBalanced(t, clientView(out, false), "non-Outlook")
		})
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
			out := string(renderForTest(t, data))
			if strings.Contains(out, `class="html_block`) {
				t.Skip("has a pass-through HTML block")
			}
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
