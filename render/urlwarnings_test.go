package render

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
)

// jsonString is s as a JSON string (strconv.Quote writes \x01, which
// JSON has not).
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// urlModulesDesign is a one-column design of the modules given (JSON).
func urlModulesDesign(modules ...string) string {
	return `{"page":{"rows":[{"columns":[{"grid-columns":12,"modules":[` + strings.Join(modules, ",") + `]}]}]}}`
}

func buttonTo(href string) string {
	return module("button", `{"button":{"label":"<p>Go</p>","href":`+jsonString(href)+`}}`)
}

// TestURLWarnings: a link or source the HTML leaves out because
// design.SafeURL refuses it is named in the warnings, by field, scheme
// and place, alike in every layout; one warning per field, counting its
// places, whatever their schemes; the scheme cut short and header-safe.
func TestURLWarnings(t *testing.T) {
	const at0, at1 = " at page.rows[0].columns[0].modules[0]", " at page.rows[0].columns[0].modules[1]"
	tests := []struct {
		name    string
		modules []string
		absent  string // what must not reach the HTML
		want    []string
	}{
		{name: "kept links warn nothing", modules: []string{buttonTo("https://example.com/"), buttonTo("{{link}}"),
			buttonTo("mailto:a@example.com"), buttonTo("www.example.com"), buttonTo("#top"), buttonTo(""),
			module("image", `{"image":{"src":"data:image/png;base64,iVBORw0KGgo=","href":"tel:+15550100","alt":"x"}}`)}},
		{name: "button skype", modules: []string{buttonTo("skype:me?call")}, absent: "skype:",
			want: []string{`URL of "href" dropped (URL scheme "skype:" not allowed)` + at0}},
		{name: "button javascript", modules: []string{buttonTo("javascript:alert(1)")}, absent: "alert(1)",
			want: []string{`URL of "href" dropped (URL scheme "javascript:" not allowed)` + at0}},
		{name: "scheme as read: case, controls, tabs", modules: []string{buttonTo("\x01 JaVa\tScript:alert(1)")}, absent: "alert(1)",
			want: []string{`URL of "href" dropped (URL scheme "javascript:" not allowed)` + at0}},
		{name: "long scheme cut", modules: []string{buttonTo(strings.Repeat("x", 5000) + ":y")}, absent: "xxxxxxxxxxxxxxxxxxxxxxxxxx",
			want: []string{`URL of "href" dropped (URL scheme "xxxxxxxxxxxxxxxxxxxxxxxx\u2026:" not allowed)` + at0}},
		{name: "non-ASCII scheme escaped", modules: []string{buttonTo("f\u00efle\u2028x://h/s")}, absent: "://h/s",
			want: []string{`URL of "href" dropped (URL scheme "f\u00efle\u2028x:" not allowed)` + at0}},
		{name: "non-ASCII scheme cut by its escapes", modules: []string{buttonTo(strings.Repeat("\uff46e", 50) + ":x")}, absent: "\uff46",
			want: []string{`URL of "href" dropped (URL scheme "\uff46e\uff46e\uff46e\u2026:" not allowed)` + at0}},
		{name: "data: not an image", modules: []string{module("image", `{"image":{"src":"data:image/svg+xml,<svg/>","alt":"x"}}`)},
			absent: "svg+xml", want: []string{`URL of "src" dropped (data: URL not of a raster image)` + at0}},
		{name: "one warning per field, the first place's scheme", modules: []string{buttonTo("skype:me"), buttonTo("javascript:x")},
			absent: "skype:", want: []string{`URL of "href" dropped (URL scheme "skype:" not allowed)` + at0 + " (and 1 more)"}},
		{name: "image source and link", modules: []string{module("image", `{"image":{"src":"file://h/s/a.png","href":"ms-msdt:/id","alt":"x"}}`)},
			absent: "file:", want: []string{
				`URL of "src" dropped (URL scheme "file:" not allowed)` + at0,
				`URL of "href" dropped (URL scheme "ms-msdt:" not allowed)` + at0}},
		{name: "menu item", modules: []string{module("menu", `{"menuItemsList":{"items":[{"text":"Word","link":{"href":"ms-word:ofe|u|x"}},{"text":"Shop","link":{"href":"https://example.com/"}}]}}`)},
			absent: "ms-word:", want: []string{`URL of "href" dropped (URL scheme "ms-word:" not allowed)` + at0}},
		{name: "social icon", modules: []string{module("social", `{"iconsList":{"icons":[{"type":"custom","name":"S","image":{"src":"jar:x!/i.png","href":"smb://h/s","alt":"S"}}]}}`)},
			absent: "smb:", want: []string{
				`URL of "src" dropped (URL scheme "jar:" not allowed)` + at0,
				`URL of "href" dropped (URL scheme "smb:" not allowed)` + at0}},
		{name: "icon with text", modules: []string{module("icons", `{"iconsList":{"icons":[{"image":"file://h/i.png","href":"intent://x","text":"Go","alt":"Go"}]}}`)},
			absent: "intent:", want: []string{
				`URL of "image" dropped (URL scheme "file:" not allowed)` + at0,
				`URL of "href" dropped (URL scheme "intent:" not allowed)` + at0}},
		{name: "video", modules: []string{module("video", `{"video":{"src":"ms-officecmd:{}","thumbSrc":"file://h/t.jpg","iconSrc":"vbscript:x","thumbAlt":"V"}}`)},
			absent: "officecmd", want: []string{
				`URL of "src" dropped (URL scheme "ms-officecmd:" not allowed)` + at0,
				`URL of "thumbSrc" dropped (URL scheme "file:" not allowed)` + at0,
				`URL of "iconSrc" dropped (URL scheme "vbscript:" not allowed)` + at0}},
		{name: "rich text link and image", modules: []string{paragraph(`<p><a href="&#106;avascript:x">a</a> <img src="search-ms:q" alt="i"> <a href="https://example.com/">b</a></p>`),
			paragraph(`<p><a href="view-source:x">c</a></p>`)},
			absent: "search-ms", want: []string{
				`URL of "<a href>" dropped (URL scheme "javascript:" not allowed)` + at0 + " (and 1 more)",
				`URL of "<img src>" dropped (URL scheme "search-ms:" not allowed)` + at0}},
		{name: "rich text inline style", modules: []string{paragraph(`<p style="background:url('SMB://h/s.png');color:red">x</p>` +
			`<div style="color:blue;background-image:-webkit-image-set(&quot;search-ms:x&quot; 1x)">y</div><p style="background:url(https://example.com/a.png)">z</p>`)},
			absent: "smb:", want: []string{
				`URL of "<p style>" dropped (URL scheme "smb:" not allowed)` + at0,
				`URL of "<div style>" dropped (URL scheme "search-ms:" not allowed)` + at0}},
		{name: "network paths, read as file: by desktop mail clients", modules: []string{buttonTo("//attacker.test/x"),
			module("image", `{"image":{"src":"\\\\attacker.test\\s\\a.png","alt":"x"}}`),
			paragraph(`<p><a href="&#47;/attacker.test/y">a</a><img src=" /\attacker.test/i.png"><span style="background:url( '//attacker.test/b.png')">b</span></p>`)},
			absent: "attacker.test", want: []string{
				`URL of "href" dropped (network path not allowed)` + at0,
				`URL of "src" dropped (network path not allowed)` + at1,
				`URL of "<a href>" dropped (network path not allowed)` + " at page.rows[0].columns[0].modules[2]",
				`URL of "<img src>" dropped (network path not allowed)` + " at page.rows[0].columns[0].modules[2]",
				`URL of "<span style>" dropped (network path not allowed)` + " at page.rows[0].columns[0].modules[2]"}},
		{name: "mailto: attaching a file", modules: []string{buttonTo("mailto:a@example.com?subject=Hi&ATT%61CHMENT=/etc/passwd"),
			paragraph(`<p><a href="mailto:a@example.com?subject=x&amp;attach=~/.ssh/id_rsa">m</a> <a href="mailto:a@example.com?subject=Hi&amp;cc=b@example.com&amp;body=Please%20attach%20it">ok</a></p>`)},
			absent: "passwd", want: []string{
				`URL of "href" dropped (mailto: URL attaching a file not allowed)` + at0,
				`URL of "<a href>" dropped (mailto: URL attaching a file not allowed)` + at1}},
		{name: "link of an unlinked button's label", modules: []string{buttonTo(""), module("button", `{"button":{"label":"<p><a href=\"sms:1\">ok</a> <a href=\"skype:me\">Go</a></p>","href":""}}`)},
			absent: "skype:", want: []string{`URL of "<a href>" dropped (URL scheme "skype:" not allowed)` + at1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inEachLayout(t, urlModulesDesign(tt.modules...), func(layout Layout, out *Output) {
				checkWarnings(t, layout, out, tt.want)
				if tt.absent != "" && strings.Contains(string(out.Body), tt.absent) {
					t.Errorf("%s: HTML has %q", layout, tt.absent)
				}
				for _, w := range out.Warnings {
					if len(w) > 160 {
						t.Errorf("%s: warning of %d bytes: %q", layout, len(w), w)
					}
					for _, c := range w {
						if c < 0x20 || c > 0x7e {
							t.Errorf("%s: warning not header-safe: %q", layout, w)
						}
					}
				}
			})
		})
	}
}

// TestURLWarningsBounded: thousands of refused links, each of its own
// scheme, give one short warning per field, counting every place.
func TestURLWarningsBounded(t *testing.T) {
	const n = 3000
	var ms []string
	for i := range n {
		scheme := "x" + strings.Repeat("y", i%300) + strconv.Itoa(i)
		ms = append(ms, buttonTo(scheme+":z"), paragraph(`<p><a href="`+scheme+`:z">a</a></p>`))
	}
	d, err := design.Decode([]byte(urlModulesDesign(ms...)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := HTML(d)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`URL of "href" dropped (URL scheme "x0:" not allowed) at page.rows[0].columns[0].modules[0] (and 2999 more)`,
		`URL of "<a href>" dropped (URL scheme "x0:" not allowed) at page.rows[0].columns[0].modules[1] (and 2999 more)`,
	}
	if strings.Join(out.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n got %.500q\nwant %q", out.Warnings, want)
	}
}

// TestPlainTextURLWarnings: a link the plain text leaves out because
// design.SafeURL refuses it (its label kept, its URL not printed) is
// warned of as in the HTML, by field, scheme and place: also the links of
// html blocks and table cells, which the plain text checks too.
func TestPlainTextURLWarnings(t *testing.T) {
	const at0, at1 = " at page.rows[0].columns[0].modules[0]", " at page.rows[0].columns[0].modules[1]"
	tests := []struct {
		name    string
		modules []string
		absent  string // what must not reach the text
		want    []string
	}{
		{name: "kept and empty links warn nothing", modules: []string{buttonTo("https://example.com/"), buttonTo("{{link}}"),
			buttonTo(""), buttonTo("#"), paragraph(`<p><a href="mailto:a@example.com">m</a> <a>none</a></p>`)}},
		{name: "button skype", modules: []string{buttonTo("skype:me?call")}, absent: "skype:",
			want: []string{`URL of "href" dropped (URL scheme "skype:" not allowed)` + at0}},
		{name: "one warning per field, the first place's scheme", modules: []string{buttonTo("\x01Java\tScript:x"), buttonTo("skype:me")},
			absent: "skype:", want: []string{`URL of "href" dropped (URL scheme "javascript:" not allowed)` + at0 + " (and 1 more)"}},
		{name: "image, menu, social and icon links", modules: []string{
			module("image", `{"image":{"src":"https://example.com/a.png","href":"ms-msdt:/id","alt":"Pic"}}`),
			module("menu", `{"menuItemsList":{"items":[{"text":"Word","link":{"href":"ms-word:ofe|u|x"}}]}}`),
			module("social", `{"iconsList":{"icons":[{"type":"custom","name":"S","image":{"src":"https://example.com/s.png","href":"smb://h/s","alt":"S"}}]}}`),
			module("icons", `{"iconsList":{"icons":[{"image":"https://example.com/i.png","href":"intent://x","text":"Go"}]}}`)},
			absent: "://", want: []string{`URL of "href" dropped (URL scheme "ms-msdt:" not allowed)` + at0 + " (and 3 more)"}},
		{name: "video", modules: []string{module("video", `{"video":{"src":"ms-officecmd:{}","thumbSrc":"https://example.com/t.jpg","thumbAlt":"V"}}`)},
			absent: "officecmd", want: []string{`URL of "src" dropped (URL scheme "ms-officecmd:" not allowed)` + at0}},
		{name: "rich text and html block", modules: []string{paragraph(`<p><a href="&#102;ile://h/s">f</a></p>`),
			module("html", `{"html":{"html":"<a href=\"view-source:x\">v</a>"}}`)},
			absent: "://h", want: []string{`URL of "<a href>" dropped (URL scheme "file:" not allowed)` + at0 + " (and 1 more)"}},
		{name: "network path", modules: []string{buttonTo(`\\attacker.test\s`), paragraph(`<p><a href="//attacker.test/x">f</a></p>`)},
			absent: "attacker.test", want: []string{`URL of "href" dropped (network path not allowed)` + at0,
				`URL of "<a href>" dropped (network path not allowed)` + at1}},
		{name: "mailto: attaching a file", modules: []string{buttonTo("mailto:a@example.com?attach=/etc/passwd"),
			paragraph(`<p><a href="mailto:a@example.com?subject=x;attachment=/etc/passwd">m</a> <a href="mailto:b@example.com?subject=Hi&amp;body=Please%20attach%20it">ok</a></p>`)},
			absent: "passwd", want: []string{`URL of "href" dropped (mailto: URL attaching a file not allowed)` + at0,
				`URL of "<a href>" dropped (mailto: URL attaching a file not allowed)` + at1}},
		{name: "table cell", modules: []string{buttonTo(""), module("table", `{"table":{"content":{"rows":[{"cells":[{"html":"<a href=\"data:text/html,x\">d</a>"}]}]}}}`)},
			absent: "data:", want: []string{`URL of "<a href>" dropped (data: URL not of a raster image)` + at1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := design.Decode([]byte(urlModulesDesign(tt.modules...)))
			if err != nil {
				t.Fatal(err)
			}
			out, err := PlainText(d)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(out.Warnings, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("warnings\n got %q\nwant %q", out.Warnings, tt.want)
			}
			if tt.absent != "" && strings.Contains(string(out.Body), tt.absent) {
				t.Errorf("text has %q:\n%s", tt.absent, out.Body)
			}
		})
	}
}

// fontsDesign is a design whose text uses the families Lato and Roboto,
// with the web fonts given (JSON) in page.body.webFonts, or in
// page.webFonts when misplaced.
func fontsDesign(misplaced bool, fonts ...string) string {
	list := `"webFonts":[` + strings.Join(fonts, ",") + `]`
	body, page := list+",", ""
	if misplaced {
		body, page = "", list+","
	}
	return `{"page":{` + page + `"body":{` + body + `"content":{"style":{"font-family":"'Lato', sans-serif"}}},"rows":[{"columns":[{"grid-columns":12,"modules":[` +
		paragraph(`<p style="font-family:Roboto, Arial">Hi</p>`) + `]}]}]}}`
}

func webFont(name, url string) string {
	return `{"name":` + jsonString(name) + `,"fontFamily":` + jsonString("'"+name+"', sans-serif") + `,"url":` + jsonString(url) + `}`
}

// TestWebFontWarnings: the stylesheet link of a web font the design uses
// is written only for an http or https URL that design.SafeURL allows;
// any other is left out with a warning, as a link is, naming the field,
// the font's place and why (a font the design does not use is left out
// without one, as any unused font is), alike in every layout.
func TestWebFontWarnings(t *testing.T) {
	tests := []struct {
		name      string
		misplaced bool
		fonts     []string
		links     []string // the URLs linked
		absent    string   // what must not reach the HTML
		want      []string
	}{
		{name: "http and https linked", fonts: []string{webFont("Lato", "https://fonts.example/css?family=Lato&display=swap"), webFont("Roboto", "HTTP://fonts.example/roboto.css")},
			links: []string{"https://fonts.example/css?family=Lato&amp;display=swap", "HTTP://fonts.example/roboto.css"}},
		{name: "scheme as browsers read it, as a link's", fonts: []string{webFont("Lato", "HT\tTPS://fonts.example/lato.css")},
			links: []string{"HT\tTPS://fonts.example/lato.css"}},
		{name: "ftp", fonts: []string{webFont("Lato", "ftp://fonts.example/lato.css")}, absent: "ftp:",
			want: []string{`URL of "url" dropped (URL scheme "ftp:" not allowed) at page.body.webFonts[0]`}},
		{name: "script", fonts: []string{webFont("Roboto", "https://fonts.example/r.css"), webFont("Lato", " JavaScript:alert(1)")},
			links: []string{"https://fonts.example/r.css"}, absent: "alert",
			want: []string{`URL of "url" dropped (URL scheme "javascript:" not allowed) at page.body.webFonts[1]`}},
		{name: "file", fonts: []string{webFont("Lato", "file://attacker.test/s/lato.css")}, absent: "attacker.test",
			want: []string{`URL of "url" dropped (URL scheme "file:" not allowed) at page.body.webFonts[0]`}},
		{name: "network path", fonts: []string{webFont("Lato", "//attacker.test/lato.css")}, absent: "attacker.test",
			want: []string{`URL of "url" dropped (network path not allowed) at page.body.webFonts[0]`}},
		{name: "data:", fonts: []string{webFont("Lato", "data:text/css,x")}, absent: "data:",
			want: []string{`URL of "url" dropped (data: URL not of a raster image) at page.body.webFonts[0]`}},
		{name: "no scheme", fonts: []string{webFont("Lato", "fonts/lato.css"), webFont("Roboto", "httpfonts.example/roboto.css")}, absent: "fonts.example",
			want: []string{`URL of "url" dropped (URL without a scheme not allowed) at page.body.webFonts[0] (and 1 more)`}},
		{name: "scheme escaped and cut", fonts: []string{webFont("Lato", strings.Repeat("\uff46e", 50)+":x")}, absent: "\uff46",
			want: []string{`URL of "url" dropped (URL scheme "\uff46e\uff46e\uff46e\u2026:" not allowed) at page.body.webFonts[0]`}},
		{name: "unused font", fonts: []string{webFont("Open Sans", "ftp://fonts.example/o.css")}, absent: "ftp:"},
		{name: "junk entries counted, one warning per field", fonts: []string{`"junk"`, webFont("Lato", "ms-msdt:/id"), webFont("Roboto", "//h/r.css")}, absent: "msdt",
			want: []string{`URL of "url" dropped (URL scheme "ms-msdt:" not allowed) at page.body.webFonts[1] (and 1 more)`}},
		{name: "misplaced web fonts", misplaced: true, fonts: []string{webFont("Roboto", "https://fonts.example/r.css"), webFont("Lato", "smb://h/s/lato.css")},
			links: []string{"https://fonts.example/r.css"}, absent: "smb:",
			want: []string{`URL of "url" dropped (URL scheme "smb:" not allowed) at page.webFonts[1]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := inEachLayout(t, fontsDesign(tt.misplaced, tt.fonts...), func(layout Layout, out *Output) {
				checkWarnings(t, layout, out, tt.want)
				html := string(out.Body)
				if got := strings.Count(html, `rel="stylesheet"`); got != len(tt.links) {
					t.Errorf("%s: %d stylesheet links, want %d", layout, got, len(tt.links))
				}
				for _, l := range tt.links {
					if !strings.Contains(html, `<link href="`+l+`" rel="stylesheet"`) {
						t.Errorf("%s: no link to %s", layout, l)
					}
				}
				if tt.absent != "" && strings.Contains(html, tt.absent) {
					t.Errorf("%s: HTML has %q", layout, tt.absent)
				}
			})
			out, err := PlainText(d)
			if err != nil {
				t.Fatal(err)
			}
			if out.Warnings != nil {
				t.Errorf("plain text: warnings %q", out.Warnings)
			}
		})
	}
}
