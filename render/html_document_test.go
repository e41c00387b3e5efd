package render

import (
	"os"
	"strings"
	"testing"
)

// TestDocumentFrame checks head-level behaviour on fixtures with explicit
// expectations (the goldens pin the exact bytes; this says what matters).
func TestDocumentFrame(t *testing.T) {
	tests := []struct {
		fixture     string
		contains    []string
		notContains []string
	}{
		{"body-rtl-meta", []string{
			`lang="ar" dir="rtl"`,
			`<title>Newsletter &lt;العربية&gt;</title>`,
			`@media (max-width:660px)`, // messageWidth 640 + 20
			`<!--[if !mso]><!--><link href="https://fonts.googleapis.com/css2?family=Cairo:wght@400;700" rel="stylesheet" type="text/css"><!--<![endif]-->`,
			`>Preview text shown in the inbox`,
		}, []string{"family=Unused"}},
		{"module-heading", []string{"family=Lato", "'Lato', Tahoma, Verdana, Segoe, sans-serif",
			// Headings are bold by default: a normal weight must be said.
			"font-size:24px;font-weight:normal;"}, []string{"family=Montserrat"}},
		// No language in the design: "und" (undetermined), not a claim of English.
		{"module-text", []string{`lang="und"`, `@media (max-width:620px)`, "<title></title>"}, []string{"dir=", "<link"}},
		{"row-nostack", []string{`class="rc"`, "width:50.0000%"}, []string{`class="rc st"`}},
		{"row-columns", []string{`class="rc st"`, "max-width:200px", "max-width:400px", `<!--[if mso]><td width="200" valign="top"`}, nil},
		{"row-reverse", []string{`class="rv"`, `class="col cf"`, `class="col cl"`, ".rv .cf{display:table-footer-group!important}"}, nil},
		{"row-visibility", []string{`class="row r1 mh"`, `<!--[if !mso]><!--><div class="dh" style="display:none;`, `class="paragraph_block mh"`}, nil},
		// Icons wrap in a narrow column (inline-block items); Outlook keeps
		// them in one ghost-table row.
		{"module-icons", []string{`<div class="icons-inner" style="text-align:center"><!--[if mso]><table align="center"`, `<!--[if mso]><td valign="middle"><![endif]--><div class="ic" style="display:inline-block;vertical-align:middle">`}, []string{`class="icons-table"`}},
		// Menus wrap; a hamburger menu is a compact vertical list on phones
		// with narrowed side padding; the others keep their separators.
		{"module-menu", []string{"word-break:break-word", `<div class="menu-links tx hb"`,
			".hb .sep{display:none!important}.hb .mi{display:block!important;padding:4px 0!important}",
			`class="menu_block hp3"`, ".hp3 td.pad{padding-left:5px!important;padding-right:5px!important}"}, nil},
		// messageWidthMobile narrows stacking rows (one column too) on
		// phones, not rows that keep their columns side by side.
		{"body-popup-mobile-width", []string{`@media (max-width:420px)`, ".mw{max-width:250px!important}",
			`<table class="row r1"`, `class="rc st mw"`, `class="rc mw"`, `class="rc" align`}, nil},
		{"module-social", []string{`<div class="social-inner" style="text-align:center"><!--[if mso]><table align="center"`, `<!--[if mso]><td><![endif]--><div class="si" style="display:inline-block;vertical-align:top">`}, []string{`class="social-table"`}},
		// Text content escapes & < > only: quoted merge tag arguments
		// pass through, and no end tag can be spelt.
		{"body-merge-tags-text", []string{
			`<title>Hi {{ name | default: "you" }} &lt;/title&gt;&lt;script&gt;alert("x")&lt;/script&gt; &amp; more</title>`,
			`>Hello {{ first_name | default: "friend" }} &lt;/div&gt;&lt;img src=x onerror="y"&gt;&#8199;`,
			`<span class="tx">{{ "Follow" | upcase }}</span>`, `Call {{ phone | default: "us" }} &amp; more`,
			`<span class="sep" aria-hidden="true">{{ "|" }}</span>`, `Email {{ "(required)" }}`, `Send me "news" &amp; offers`,
		}, []string{"&quot;", "<script", "<img src=x"}},
		{"module-button", []string{`<v:roundrect`, `href="https://example.com/start?utm={{campaign}}"`, `arcsize="8%"`, `fillcolor="#8E364B"`, `height:52px;width:148px`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			data, err := os.ReadFile("testdata/fixtures/" + tt.fixture + ".json")
			if err != nil {
				t.Fatal(err)
			}
			out := string(renderForTest(t, data))
			for _, s := range tt.contains {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q", s)
				}
			}
			for _, s := range tt.notContains {
				if strings.Contains(out, s) {
					t.Errorf("output has %q", s)
				}
			}
		})
	}
}

func TestLangTag(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"en", "en", true},
		{" pt-BR ", "pt-BR", true},
		{"it_IT", "it-IT", true},
		{"zh-Hant-TW", "zh-Hant-TW", true},
		{"es-419", "es-419", true},
		{"", "", false},
		{"e", "", false},
		{"1en", "", false},
		{"en--US", "", false},
		{"en-", "", false},
		{`en" onload="x`, "", false},
		{"en US", "", false},
		{"toolongprimary", "", false},
		{"fa-IR-x-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "", false},
	}
	for _, tt := range tests {
		got, ok := langTag(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("langTag(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestLangFallbacks: head.meta.lang, then the top-level "language", then
// "und"; junk is skipped.
func TestLangFallbacks(t *testing.T) {
	tests := []struct{ doc, want string }{
		{`{"page":{"head":{"meta":{"lang":"fa-IR"}},"rows":[]},"language":"it-IT"}`, `lang="fa-IR"`},
		{`{"page":{"head":{"meta":{"lang":"not a tag"}},"rows":[]},"language":"it-IT"}`, `lang="it-IT"`},
		{`{"page":{"rows":[]},"language":"it_IT"}`, `lang="it-IT"`},
		{`{"page":{"rows":[]}}`, `lang="und"`},
	}
	for _, tt := range tests {
		out := string(renderForTest(t, []byte(tt.doc)))
		if !strings.Contains(out, tt.want) {
			t.Errorf("%s: output lacks %s", tt.doc, tt.want)
		}
	}
}
