package design

import (
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// doc wraps one row in a minimal design.
func doc(body, row string) string {
	if body == "" {
		body = `{}`
	}
	return `{"page":{"body":` + body + `,"rows":[` + row + `]}}`
}

func rowWith(module string) string {
	return `{"columns":[{"grid-columns":12,"modules":[` + module + `]}]}`
}

func TestDecodeVariations(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, d *Design)
	}{
		{"messageWidth px string is the content width",
			doc(`{"content":{"style":{"width":"500px"},"computedStyle":{"messageWidth":"640px"}}}`, rowWith("")),
			func(t *testing.T, d *Design) { eq(t, d.Page.Body.Width, 640) }},
		{"messageWidth as a number",
			doc(`{"content":{"computedStyle":{"messageWidth":720}}}`, rowWith("")),
			func(t *testing.T, d *Design) { eq(t, d.Page.Body.Width, 720) }},
		{"missing messageWidth falls back to the content width then the default",
			doc(`{"content":{"style":{"width":"550px"}}}`, rowWith("")),
			func(t *testing.T, d *Design) { eq(t, d.Page.Body.Width, 550) }},
		{"absurd messageWidth is clamped",
			doc(`{"content":{"computedStyle":{"messageWidth":"83px"}}}`, rowWith("")),
			func(t *testing.T, d *Design) { eq(t, d.Page.Body.Width, MinWidth) }},
		{"unusable messageWidth uses the default",
			doc(`{"content":{"computedStyle":{"messageWidth":"auto"}}}`, rowWith("")),
			func(t *testing.T, d *Design) { eq(t, d.Page.Body.Width, DefaultWidth) }},
		{"legacy body type spelling and version",
			`{"page":{"template":{"version":"0.0.1"},"body":{"type":"mailup-bee-page-proprerties"},"rows":[]}}`,
			func(t *testing.T, d *Design) { eq(t, d.Page.Version, "0.0.1") }},
		{"descriptor and mobileStyle as []",
			doc("", rowWith(`{"type":"mailup-bee-newsletter-modules-empty","descriptor":[]},{"type":"mailup-bee-newsletter-modules-image","descriptor":{"image":{"src":"a.png"},"mobileStyle":[]}}`)),
			func(t *testing.T, d *Design) {
				m := d.Page.Rows[0].Columns[0].Modules
				eq(t, m[0].Kind, KindEmpty)
				eq(t, m[0].Descriptor.Kind, Object)
				eq(t, m[1].Mobile.Len(), 0)
				eq(t, m[1].Descriptor.At("image", "src").Text(), "a.png")
			}},
		{"comments as [] and unknown siblings are kept",
			`{"page":{"rows":[]},"comments":[],"language":"it-IT"}`,
			func(t *testing.T, d *Design) { eq(t, d.Root.Get("language").Text(), "it-IT") }},
		{"image width number, float, px string, percent",
			doc("", rowWith(`{"type":"mailup-bee-newsletter-modules-image","descriptor":{"computedStyle":{"width":338.5}}},{"type":"mailup-bee-newsletter-modules-image","descriptor":{"computedStyle":{"width":"251.99999999999997px"}}},{"type":"mailup-bee-newsletter-modules-image","descriptor":{"computedStyle":{"width":"100%"}}}`)),
			func(t *testing.T, d *Design) {
				m := d.Page.Rows[0].Columns[0].Modules
				px, ok := m[0].Computed.Px("width")
				eq(t, px, 338.5)
				eq(t, ok, true)
				px, _ = m[1].Computed.Px("width")
				eq(t, px, 251.99999999999997)
				_, ok = m[2].Computed.Px("width")
				eq(t, ok, false)
				n, unit, _ := m[2].Computed.Value("width").Number()
				eq(t, n, 100.0)
				eq(t, unit, "%")
			}},
		{"vertical-align spelling and row flags",
			doc("", `{"content":{"computedStyle":{"vertical-align":"middle","rowColStackOnMobile":false,"rowReverseColStackOnMobile":true,"hideContentOnMobile":true,"columnsSpacing":"20px"}},"columns":[{"grid-columns":6},{"grid-columns":6}]}`),
			func(t *testing.T, d *Design) {
				r := d.Page.Rows[0]
				eq(t, r.VerticalAlign, "middle")
				eq(t, r.StackOnMobile, false)
				eq(t, r.ReverseOnMobile, true)
				eq(t, r.HideOnMobile, true)
				eq(t, r.ColumnsSpacing, 20.0)
			}},
		{"rowColStackOnMobile defaults to true",
			doc("", rowWith("")),
			func(t *testing.T, d *Design) { eq(t, d.Page.Rows[0].StackOnMobile, true) }},
		{"grid-columns missing or out of range are normalised",
			doc("", `{"columns":[{"grid-columns":4},{},{"grid-columns":40}]}`),
			func(t *testing.T, d *Design) {
				c := d.Page.Rows[0].Columns
				eq(t, []int{c[0].Grid, c[1].Grid, c[2].Grid}, []int{4, 4, 4})
			}},
		{"grid-columns as a numeric string",
			doc("", `{"columns":[{"grid-columns":"8"},{"grid-columns":4}]}`),
			func(t *testing.T, d *Design) { eq(t, d.Page.Rows[0].Columns[0].Grid, 8) }},
		{"web fonts: legacy keys and misplaced page.webFonts",
			`{"page":{"webFonts":["junk",{"fontName":"Lato","family":"'Lato', sans-serif","url":"https://fonts.googleapis.com/css?family=Lato"},"junk"],"rows":[]}}`,
			func(t *testing.T, d *Design) {
				eq(t, d.Page.Body.WebFonts, []WebFont{{Name: "Lato", FontFamily: "'Lato', sans-serif", URL: "https://fonts.googleapis.com/css?family=Lato", Index: 1}})
				eq(t, d.Page.Body.WebFontsPath, "page.webFonts")
			}},
		{"web fonts in page.body",
			`{"page":{"body":{"webFonts":[{"name":"Lato","fontFamily":"Lato","url":"https://f.test/l.css"}]},"rows":[]}}`,
			func(t *testing.T, d *Design) {
				eq(t, d.Page.Body.WebFonts, []WebFont{{Name: "Lato", FontFamily: "Lato", URL: "https://f.test/l.css"}})
				eq(t, d.Page.Body.WebFontsPath, "page.body.webFonts")
			}},
		{"head meta and RTL",
			`{"page":{"head":{"meta":{"lang":"ar","title":"T","preheader":"P"}},"body":{"content":{"style":{"direction":"RTL"}}},"rows":[]}}`,
			func(t *testing.T, d *Design) {
				eq(t, d.Page.Meta, Meta{Lang: "ar", Title: "T", Preheader: "P"})
				eq(t, d.Page.Body.Direction, "rtl")
			}},
		{"addon renders by contentType",
			doc("", rowWith(`{"type":"mailup-bee-newsletter-modules-addon","contentType":"image","descriptor":{"image":{"src":"g.gif"}}}`)),
			func(t *testing.T, d *Design) {
				m := &d.Page.Rows[0].Columns[0].Modules[0]
				eq(t, m.EffectiveKind(), KindImage)
				eq(t, m.Descriptor.At("image", "src").Text(), "g.gif")
			}},
		{"BOM is accepted",
			"\xef\xbb\xbf" + `{"page":{"rows":[]}}`,
			func(t *testing.T, d *Design) { eq(t, len(d.Page.Rows), 0) }},
		{"null members are absent",
			doc(`{"container":null,"content":{"computedStyle":null}}`, `{"container":null,"columns":[{"style":null,"modules":null}]}`),
			func(t *testing.T, d *Design) { eq(t, len(d.Page.Rows[0].Columns[0].Modules), 0) }},
		{"escapes decode",
			doc("", rowWith(`{"type":"mailup-bee-newsletter-modules-html","descriptor":{"html":{"html":"a\u00e9\ud83d\ude00\n\"\/"}}}`)),
			func(t *testing.T, d *Design) {
				eq(t, d.Page.Rows[0].Columns[0].Modules[0].Descriptor.At("html", "html").Text(), "aé😀\n\"/")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decode([]byte(tt.in))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			tt.check(t, d)
		})
	}
}

func eq[T any](t *testing.T, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestDecodePathErrors(t *testing.T) {
	tests := []struct {
		in, path, msg string
	}{
		{`[]`, "$", "JSON object"},
		{`{"rows":[]}`, "$", `missing "page"`},
		{`{"page":"x"}`, "page", "must be an object"},
		{`{"page":{}}`, "page", `missing "rows"`},
		{`{"page":{"rows":{}}}`, "page.rows", "must be an array"},
		{`{"page":{"body":5,"rows":[]}}`, "page.body", "must be an object"},
		{`{"page":{"body":{"webFonts":{}},"rows":[]}}`, "page.body.webFonts", "must be an array"},
		{`{"page":{"webFonts":"x","rows":[]}}`, "page.webFonts", "must be an array"},
		{`{"page":{"rows":[1]}}`, "page.rows[0]", "row must be an object"},
		{`{"page":{"rows":[{"columns":[]},{}]}}`, "page.rows[1]", `missing "columns"`},
		{`{"page":{"rows":[{"columns":{}}]}}`, "page.rows[0].columns", "must be an array"},
		{`{"page":{"rows":[{"content":{"style":{},"mobileStyle":"x"},"columns":[]}]}}`, "page.rows[0].content.mobileStyle", "mobileStyle must be an object"},
		{`{"page":{"rows":[{"container":{"style":7},"columns":[]}]}}`, "page.rows[0].container.style", "style must be an object"},
		{`{"page":{"rows":[{"columns":[{"grid-columns":true}]}]}}`, "page.rows[0].columns[0]", "grid-columns"},
		{`{"page":{"rows":[{"columns":[{"modules":"x"}]}]}}`, "page.rows[0].columns[0].modules", "must be an array"},
		{`{"page":{"rows":[{"columns":[{"modules":[{}]}]}]}}`, "page.rows[0].columns[0].modules[0]", `missing module "type"`},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":3}]}]}]}}`, "page.rows[0].columns[0].modules[0]", "type must be a string"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-text","descriptor":[1]}]}]}]}}`, "page.rows[0].columns[0].modules[0].descriptor", "must be an object"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-image","descriptor":{"mobileStyle":"x"}}]}]}]}}`, "page.rows[0].columns[0].modules[0]", "descriptor.mobileStyle must be an object"},
		{`{"page":{"rows":[{"columns":[]},{},{},{"columns":[{"modules":[]},{"modules":[{"type":"t"},{"type":"t"},{"type":"mailup-bee-newsletter-modules-image","descriptor":{"image":{"src":{}}}}]}]}]}}`,
			"page.rows[3]", ""}, // rows[1] has no columns: the first problem wins
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Decode([]byte(tt.in))
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *PathError", err)
			}
			if tt.path == "page.rows[3]" { // documents the first-problem rule
				if pe.Path != "page.rows[1]" {
					t.Errorf("path %q, want page.rows[1]", pe.Path)
				}
				return
			}
			if pe.Path != tt.path || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("got %q: %q, want %q containing %q", pe.Path, pe.Msg, tt.path, tt.msg)
			}
			if errors.Is(err, ErrNotJSON) || errors.Is(err, ErrTooLarge) {
				t.Error("a path error must not be ErrNotJSON/ErrTooLarge")
			}
		})
	}
}

// TestDecodeUnknownModuleTypes: a module of a type the format does not
// list is rendered as nothing, with a warning, and is never a failure
// (the export contract), so its descriptor is not checked: whatever it
// holds, the design decodes, and the module's styles are empty.
func TestDecodeUnknownModuleTypes(t *testing.T) {
	for _, typ := range []string{"mailup-bee-newsletter-modules-futurekind", "x"} {
		for _, desc := range []string{`5`, `"x"`, `[1]`, `null`, `{"style":"x"}`, `{"computedStyle":[1],"mobileStyle":true}`,
			`{"style":{"padding-top":"5px"},"computedStyle":7,"mobileStyle":[]}`} {
			t.Run(typ+" "+desc, func(t *testing.T) {
				d, err := Decode([]byte(`{"page":{"rows":[{"columns":[{"modules":[{"type":"` + typ + `","descriptor":` + desc + `}]}]}]}}`))
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				m := &d.Page.Rows[0].Columns[0].Modules[0]
				if m.Kind != strings.TrimPrefix(typ, TypePrefix) {
					t.Errorf("kind %q", m.Kind)
				}
				if m.Descriptor == nil || m.Descriptor.Kind != Object {
					t.Errorf("descriptor %v, want an object", m.Descriptor)
				}
				if m.Computed.Len() != 0 || m.Mobile.Len() != 0 || m.HideOnMobile || m.HideOnDesktop {
					t.Errorf("computed %d, mobile %d members, hidden %v/%v", m.Computed.Len(), m.Mobile.Len(), m.HideOnMobile, m.HideOnDesktop)
				}
				if strings.Contains(desc, "padding-top") && m.Style.Get("padding-top") != "5px" {
					t.Errorf("style %q, want the descriptor's", m.Style.Get("padding-top"))
				}
			})
		}
	}
}

func TestDecodeNotJSON(t *testing.T) {
	for _, in := range []string{``, `{`, `{"page":}`, `nul`, `{"a":1,}`, `[1 2]`, `"\x"`, "\"a\x01\"", `01`, `1.`, `{"page":{"rows":[]}} x`, `-`, `1e`, `"\ud800` + `"`[:0]} {
		_, err := Decode([]byte(in))
		if !errors.Is(err, ErrNotJSON) {
			t.Errorf("%q: err = %v, want ErrNotJSON", in, err)
		}
		if _, err := DecodeString(in); !errors.Is(err, ErrNotJSON) {
			t.Errorf("%q: DecodeString: err = %v, want ErrNotJSON", in, err)
		}
	}
}

func TestDecodeLimits(t *testing.T) {
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	tests := []struct {
		name string
		in   string
		lim  Limits
	}{
		{"size", `{"page":{"rows":[]}}`, Limits{MaxBytes: 10}},
		{"depth", `{"page":{"rows":[],"x":` + deep + `}}`, Limits{}},
		{"values", `{"page":{"rows":[],"x":[1,2,3,4,5,6,7,8,9,10]}}`, Limits{MaxValues: 8}},
		{"items", `{"page":{"rows":[],"x":[1,2,3,4,5,6,7,8,9,10]}}`, Limits{MaxItems: 5}},
		{"string", `{"page":{"rows":[],"x":"` + strings.Repeat("a", 100) + `"}}`, Limits{MaxString: 50}},
		{"rows", `{"page":{"rows":[{"columns":[]},{"columns":[]}]}}`, Limits{MaxRows: 1}},
		{"columns", `{"page":{"rows":[{"columns":[{},{},{}]}]}}`, Limits{MaxColumns: 2}},
		{"modules", doc("", rowWith(`{"type":"a"},{"type":"b"}`)), Limits{MaxModules: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeWithLimits([]byte(tt.in), tt.lim)
			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("err = %v, want ErrTooLarge", err)
			}
			if _, err := DecodeStringWithLimits(tt.in, tt.lim); !errors.Is(err, ErrTooLarge) {
				t.Errorf("DecodeStringWithLimits: err = %v, want ErrTooLarge", err)
			}
			// Within the default limits the same input is fine (except
			// the depth case, which is over the default on purpose).
			if tt.name != "depth" {
				if _, err := Decode([]byte(tt.in)); err != nil {
					t.Errorf("default limits: %v", err)
				}
			}
		})
	}
}

func TestEncodeKeepsUnknownMembersInOrder(t *testing.T) {
	in := `{"page":{"zeta":1,"rows":[{"columns":[{"grid-columns":12,"x-custom":{"b":[1,2.50,true,null],"a":"\u003c"},"modules":[]}],"uuid":"u"}],"alpha":"é"},"comments":{}}`
	d, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(d); err != nil {
		t.Fatal(err)
	}
	want := `{"page":{"zeta":1,"rows":[{"columns":[{"grid-columns":12,"x-custom":{"b":[1,2.50,true,null],"a":"<"},"modules":[]}],"uuid":"u"}],"alpha":"é"},"comments":{}}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

// TestSafeURL: a value without a scheme (relative URLs, bare host names,
// anchors, merge tags) is allowed as it is; a value with one only for the
// allowed schemes, whatever the letter case and however controls and
// white space are spread in the scheme.
func TestSafeURL(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		// No scheme.
		{"", true},
		{"www.example.com", true},
		{"example.com/path?q=a:b", true},
		{"/x:y", true},
		{"./img/a.png", true},
		{"?a=b:c", true},
		{"#anchor", true},
		{"#t:1", true},
		{"{{link}}", true},
		{"{{ link:utm }}", true},
		{"[unsubscribe]", true},
		{"[unsub:1]", true},
		{"$url$", true},
		{"$link:x$", true},
		{"*|ARCHIVE|*", true},
		{"*|UNSUB:x|*", true},
		{"%%view_online%%", true},
		{"%%=RedirectTo(@url)=%%", true},
		{":relative", true},
		{"127.0.0.1:8080/x", true}, // a scheme starts with a letter
		{`\x`, true},               // a path from the root, on Windows too
		{"/x/y//z", true},

		// A network path: a desktop mail client has no page to take a
		// scheme from and reads it as file:, and Windows as a share
		// (\\host\share), sending the reader's credentials to the host.
		{"//attacker.test/share/x.png", false},
		{`\\attacker.test\share\x.png`, false},
		{`/\attacker.test/x`, false},
		{`\/attacker.test/x`, false},
		{" //attacker.test/x", false},
		{"\x01//attacker.test/x", false},
		{"/\t/attacker.test/x", false},
		{"/\n/attacker.test/x", false},
		{"//attacker.test:445/x", false},

		// Allowed schemes, any case, with what browsers drop.
		{"https://a.test/", true},
		{"http://a.test/", true},
		{"HTTPS://A.TEST/", true},
		{"  https://a.test/", true},
		{"ht\ttps://a.test/", true},
		{"mailto:a@b", true},
		{"MailTo:a@b", true},
		{"mailto:a@b?subject=Hi&body=Please%20attach%20it&cc=c@d&bcc=e@f", true},
		{"mailto:attach@b.test?subject=attachment", true},
		{"mailto:a@b?subject=attach=me", true},
		{"mailto:a@b?body=attach%3Dx", true},
		{"mailto:a@b?x-attach=1&attached=2&attachments=3", true},
		{"mailto:insert@b.test?subject=insert&inserted=1&body=insert=x", true},
		{"mailto:?to=a@b&subject=Q%26A", true},
		{"tel:+15551234", true},
		{"sms:+15551234", true},
		{"callto:someone", true},
		{"cid:logo@mail", true},
		{"xmpp:a@b.test", true},
		{"ftp://a.test/f.zip", true},
		{"ftps://a.test/f.zip", true},
		{"webcal://a.test/cal.ics", true},
		{"data:image/png;base64,", true},
		{"data:image/gif;base64,R0lGOD", true},
		{"DATA:IMAGE/JPEG;base64,", true},
		{"data: image/webp;base64,", true},
		{"data:ima\tge/png;base64,", true},

		// mailto: links that ask the mail client to attach a file of
		// the reader's (Evolution, KMail, older Thunderbird), however a
		// mail client may split and decode the query.
		{"mailto:a@b?attach=/etc/passwd", false},
		{"mailto:a@b?attachment=~/.ssh/id_rsa", false},
		{"mailto:a@b?subject=x&attach=/etc/passwd", false},
		{"mailto:a@b?subject=x&body=y&ATTACHMENT=file:///etc/passwd", false},
		{"MAILTO:a@b?Attach=/etc/passwd", false},
		{"mailto:a@b?att%61ch=/etc/passwd", false},
		{"mailto:a@b?%61%74%74%61%63%68%6D%65%6E%74=x", false},
		{"mailto:a@b?att%2561ch=/etc/passwd", false},
		{"mailto:a@b?attach", false},
		{"mailto:a@b?subject=x;attach=/etc/passwd", false},
		{"mailto:a@b?subject=x&amp;attach=/etc/passwd", false},
		{"mailto:a@b?subject=x&#38;attachment=/etc/passwd", false},
		{"mailto:a@b?%20attach=/etc/passwd", false},
		{"mailto:a@b?+attach+=/etc/passwd", false},
		{"mailto:a@b?at\ttach=/etc/passwd", false},
		{"mailto:a@b?att%6\t1ch=/etc/passwd", false},
		{"mailto:a@b?subject=x%26attach=/etc/passwd", false},
		{"mailto:a@b#?attach=/etc/passwd", false},
		{"mailto:a@b&attach=/etc/passwd", false},
		{"mailto:a@b?subject=x?attach=/etc/passwd", false},
		// Claws Mail puts the named file's text into the body.
		{"mailto:a@b?insert=/etc/passwd", false},
		{"mailto:a@b?subject=x&%49NSERT=~/.ssh/id_rsa", false},

		// Script schemes.
		{"javascript:alert(1)", false},
		{" JavaScript:alert(1)", false},
		{"java\tscript:alert(1)", false},
		{"java\nscript:alert(1)", false},
		{"\x01javascript:alert(1)", false},
		{"vbscript:x", false},
		{"livescript:x", false},
		{"mocha:x", false},
		{"data:text/html,<b>", false},
		{"data:image/svg+xml,<s>", false},
		{"data:image/SVG+xml,<s>", false},
		{"data:image/sv\tg+xml,<s>", false},
		{"data:image/sv\ng+xml,<s>", false},
		{"data:,x", false},
		{"data:application/pdf;base64,", false},
		{"data:im age/png;base64,", false},
		{"data:\x01image/png;base64,", false},

		// Schemes that hand the URL to a program of the reader's system.
		{"file://attacker.test/share/x.png", false},
		{"FILE://attacker.test/share", false},
		{"File:///C:/Windows/", false},
		{" file://h/s", false},
		{"\x00file://h/s", false},
		{"\x7ffile://h/s", false},
		{"fi\tle://h/s", false},
		{"fi\nle://h/s", false},
		{"fi\rle://h/s", false},
		{"f i l e://h/s", false},
		{"fi\x01le://h/s", false},
		{"ms-msdt:/id PCWDiagnostic /skip force", false},
		{"MS-MSDT:/id", false},
		{`search-ms:query=x&crumb=location:\\h\s`, false},
		{"search:query=x", false},
		{"ms-search:x", false},
		{"ms-officecmd:{}", false},
		{"ms-word:ofe|u|https://a.test/x.docx", false},
		{"ms-excel:ofv|u|https://a.test/x.xlsx", false},
		{"ms-powerpoint:x", false},
		{"ms-appinstaller:?source=https://a.test/x", false},
		{"ms-settings:", false},
		{"ms-cxh-full://0", false},
		{"shell:startup", false},
		{"smb://h/s", false},
		{"nfs://h/s", false},
		{"afp://h/s", false},
		{"jar:https://a.test/x.jar!/", false},
		{"view-source:https://a.test/", false},
		{"intent://x#Intent;scheme=http;end", false},
		{"chrome://settings", false},
		{"about:blank", false},
		{"blob:https://a.test/uuid", false},
		{"filesystem:https://a.test/x", false},
		{"mhtml:file://h/x.mht", false},
		{"res://ieframe.dll/", false},
		{"its:x.chm::/x.htm", false},
		{"ms-its:x.chm::/x.htm", false},
		{"mk:@MSITStore:x.chm::/x.htm", false},
		{"hcp://system/", false},
		{"vnd.ms.x:y", false},
		{"steam://run/1", false},
		{"zoommtg://x", false},
		{"ssh://h", false},
		{"telnet://h", false},
		{"ldap://h", false},
		{"gopher://h", false},
		{"geo:0,0", false},
		{"x-unknown+scheme.1:y", false},
		{"ｆｉｌｅ://h/s", false}, // full-width letters: no scheme of ours
		{"fïle://h/s", false},
	}
	for _, tt := range tests {
		if got := SafeURL(tt.in); got != tt.want {
			t.Errorf("SafeURL(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestScheme: the scheme SafeURL reads, as a warning names it: lower-cased,
// without the bytes SafeURL ignores, and none for a value SafeURL reads
// as relative.
func TestScheme(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"www.example.com", ""},
		{"{{ link:x }}", ""},
		{"127.0.0.1:80", ""},
		{"https://example.com/", "https"},
		{" FiLe://h/s", "file"},
		{"fi\tle://h/s", "file"},
		{"\x01ms-msdt:/id", "ms-msdt"},
		{"x-unknown+scheme.1:y", "x-unknown+scheme.1"},
		{"data:image/svg+xml,x", "data"},
		{"fïle://h/s", "fïle"},
	}
	for _, tt := range tests {
		if got := Scheme(tt.in); got != tt.want {
			t.Errorf("Scheme(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !SafeURL(tt.in) && Scheme(tt.in) == "" {
			t.Errorf("SafeURL refuses %q, which has no scheme", tt.in)
		}
	}
}

// FuzzSafeURL: whatever SafeURL allows, a browser's URL parser finds no
// scheme in and no network path ("//host", `\\host`), or one of the
// allowed schemes (data: only for raster images).
// The parser's rule is said apart from SafeURL's so the two check each
// other.
func FuzzSafeURL(f *testing.F) {
	for _, s := range []string{"https://a.test/", "{{link}}", " fi\tle://h/s", "\x01ms-msdt:/id",
		"data:image/sv\ng+xml,x", "ｆｉｌｅ://h", "127.0.0.1:80", "#a:b", "[x:y]",
		"mailto:a@b?subject=x&body=y", "mailto:a@b?att%61ch=x", "mailto:a@b?x=1&amp;attachment"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if !SafeURL(u) {
			return
		}
		// WHATWG URL: leading and trailing C0 controls and spaces are
		// stripped, tabs and line breaks removed anywhere; a scheme is
		// an ASCII letter, then letters, digits, + - ., then ':'.
		u = strings.TrimLeft(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
		u = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(u)
		scheme := ""
	scan:
		for i := 0; i < len(u); i++ {
			switch c := u[i] | 0x20; {
			case 'a' <= c && c <= 'z':
			case i > 0 && ('0' <= u[i] && u[i] <= '9' || u[i] == '+' || u[i] == '-' || u[i] == '.'):
			case i > 0 && u[i] == ':':
				scheme = strings.ToLower(u[:i])
				break scan
			default:
				break scan
			}
		}
		if scheme == "" && len(u) >= 2 && strings.ContainsRune(`/\`, rune(u[0])) && strings.ContainsRune(`/\`, rune(u[1])) {
			t.Fatalf("SafeURL(%q): a network path", u)
		}
		switch scheme {
		case "", "http", "https", "cid", "tel", "sms", "callto", "xmpp", "ftp", "ftps", "webcal":
		case "mailto":
			if f := attachingField(u[len("mailto:"):]); f != "" {
				t.Fatalf("SafeURL(%q): a mail client may read field %q", u, f)
			}
		case "data":
			typ := strings.ToLower(strings.TrimLeft(u[len("data:"):], " \f"))
			if !strings.HasPrefix(typ, "image/") || strings.HasPrefix(typ, "image/svg") {
				t.Fatalf("SafeURL(%q): data: URL of type %q", u, typ)
			}
		default:
			t.Fatalf("SafeURL(%q): a browser reads scheme %q", u, scheme)
		}
	})
}

// attachingField is the attach, attachment or insert field that a mail client
// could read in query, a mailto: URL after its colon, or "". The model
// of FuzzSafeURL: every way of splitting (at '?', '&' and ';', a fragment
// included) and of decoding (none, once, twice) a mail client might use,
// with the name's surrounding spaces (or '+') trimmed.
func attachingField(query string) string {
	escape := regexp.MustCompile(`%[0-9A-Fa-f]{2}`)
	decode := func(s string) string {
		return escape.ReplaceAllStringFunc(s, func(e string) string {
			b, _ := strconv.ParseUint(e[1:], 16, 8)
			return string([]byte{byte(b)})
		})
	}
	for range 3 {
		var fields []string
		if i := strings.IndexAny(query, "?&;"); i >= 0 { // after the address
			fields = strings.FieldsFunc(query[i:], func(r rune) bool { return r == '?' || r == '&' || r == ';' })
		}
		for _, f := range fields {
			name, _, _ := strings.Cut(f, "=")
			name = strings.Trim(name, " +\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f")
			if strings.EqualFold(name, "attach") || strings.EqualFold(name, "attachment") || strings.EqualFold(name, "insert") {
				return f
			}
		}
		query = decode(query)
	}
	return ""
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"page":{"body":{"content":{"computedStyle":{"messageWidth":"600px"}}},"rows":[{"columns":[{"grid-columns":12,"modules":[{"type":"mailup-bee-newsletter-modules-text","descriptor":{"text":{"html":"<p>x</p>"}}}]}]}]}}`))
	f.Add([]byte(`{"page":{"rows":[]},"comments":[]}`))
	f.Add([]byte(`{"a":"\ud83d\ude00\u00e9\"","b":[1.5e3,-0,true,false,null]}`))
	f.Add([]byte(`[[[[{}]]]]`))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Add([]byte(`{"page":{"rows":[{"columns":[],"widgets":[{"items":[1,"x\u00e9",{"a":[]}]}]}]}}`))
	f.Add([]byte(`{"page":{"rows":[{"columns":[{"modules":[{"descriptor":{"text":{"translations":{"it-IT":{"html":"\"x\u00e9"}}}}}]}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Decode(data)
		trimmed := data
		if len(trimmed) >= 3 && string(trimmed[:3]) == "\xef\xbb\xbf" {
			trimmed = trimmed[3:]
		}
		valid := json.Valid(trimmed)
		switch {
		case errors.Is(err, ErrTooLarge):
			return
		case errors.Is(err, ErrNotJSON):
			if valid {
				t.Fatalf("valid JSON reported as not JSON: %v", err)
			}
			return
		case valid == false:
			t.Fatalf("invalid JSON accepted (err %v)", err)
		}
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		out, err := d.Encode()
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if json.Unmarshal(trimmed, &a) != nil || json.Unmarshal(out, &b) != nil {
			t.Fatalf("round trip not JSON: %s", out)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the value:\n in  %s\n out %s", trimmed, out)
		}
	})
}
