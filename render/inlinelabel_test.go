package render

import (
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// FuzzInlineLabel: inlineLabel, on the token stream, gives what the same
// rules gave on x/net/html's tokenizer for any label the tokenizer reads
// to its end. The tokenizer drops an unfinished tag at the very end
// (`<p>a</p><b`); the old code ignored it and unwrapped the paragraph,
// inlineLabel sees something after the paragraph and keeps the label as
// it is (the sanitiser drops the unfinished tag either way).
func FuzzInlineLabel(f *testing.F) {
	for _, s := range []string{
		`<div class="txtTinyMce-wrapper"><p style="font-size: 14px; line-height: 28px;"><span>Buy <strong>now</strong></span></p></div>`,
		`<p>Shop</p>`, `<p style="x">a<!-- c -->b</p>`, `<!-- c --><p>a</p>`, `<p>a</p><!-- c -->`,
		`<div><p>a</p></div> `, `<p>a</p><p>b</p>`, `<p>a<br>b</p>`, `<p>a<div>b</div></p>`,
		`<P CLASS=x>a</P>`, `<p>a`, `<p></p><A`, `x<p>a</p>`, `<div><div><p>a</p></div></div>`, `<p>a</p></div>`,
		"<p>a\r\n</p>", `<!DOCTYPE html><p>a</p>`, `<p><plaintext><b></p>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, label string) {
		if !tokenizedWhole(label) {
			return
		}
		if got, want := inlineLabel(label), inlineLabelByTokenizer(label); got != want {
			t.Fatalf("%q:\n got %q\nwant %q", label, got, want)
		}
	})
}

// tokenizedWhole reports whether x/net/html's tokens of s, as written,
// make up all of s.
func tokenizedWhole(s string) bool {
	z := html.NewTokenizer(strings.NewReader(s))
	n := 0
	for z.Next() != html.ErrorToken {
		n += len(z.Raw())
	}
	return n == len(s)
}

// inlineLabelByTokenizer is inlineLabel as it was written on
// x/net/html's tokenizer directly (its raw tokens, comments included):
// the reference FuzzInlineLabel holds the token-stream version to.
func inlineLabelByTokenizer(label string) string {
	if !strings.Contains(label, "<") {
		return label
	}
	z := html.NewTokenizer(strings.NewReader(label))
	var (
		pos, start, end int
		pTag            string // the paragraph's start tag
		depth           int    // open wrapper divs
		state           int    // 0 before the p, 1 inside it, 2 after it
	)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		raw := len(z.Raw())
		name, _ := z.TagName()
		tag := string(name)
		switch {
		case tt == html.TextToken && state != 1:
			if strings.TrimSpace(string(z.Raw())) != "" {
				return label
			}
		case tt == html.CommentToken || tt == html.DoctypeToken:
			if state != 1 {
				return label
			}
		case state == 1 && (tt == html.StartTagToken || tt == html.EndTagToken || tt == html.SelfClosingTagToken) && blockTag(tag):
			if tt != html.EndTagToken || tag != "p" {
				return label
			}
			state, end = 2, pos
		case state == 0 && tt == html.StartTagToken && tag == "div":
			depth++
		case state == 0 && tt == html.StartTagToken && tag == "p":
			state, start, pTag = 1, pos+raw, string(z.Raw())
		case state == 2 && tt == html.EndTagToken && tag == "div" && depth > 0:
			depth--
		case state != 1:
			return label
		}
		pos += raw
	}
	if z.Err() != io.EOF || state != 2 || depth != 0 {
		return label
	}
	if attrs := pTag[2:]; strings.TrimSpace(attrs) != ">" {
		return "<span" + attrs + label[start:end] + "</span>"
	}
	return label[start:end]
}
