package mjml

import (
	"strconv"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
	"github.com/designbridge/caddy-designbridge/testutil/inventory"
)

// mjmlDesign wraps rows (a JSON array) in a page with a 600px body.
func mjmlDesign(t *testing.T, rows string) *design.Design {
	t.Helper()
	doc := `{"page":{"title":"T","body":{"container":{"style":{"background-color":"#eeeeee"}},` +
		`"content":{"style":{"color":"#111111","font-family":"Arial, sans-serif"},"computedStyle":{"messageWidth":"600px","linkColor":"#0068A5"}},` +
		`"webFonts":[{"name":"Lato","fontFamily":"'Lato', sans-serif","url":"https://fonts.example/css?family=Lato"}]},"rows":` + rows + `}}`
	d, err := design.Decode([]byte(doc))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return d
}

// mjmlRow is one row with the given columns (JSON objects).
func mjmlRow(extra string, columns ...string) string {
	return `{"container":{"style":{"background-color":"transparent"}},"content":{"style":{"background-color":"#ffffff","padding-top":"4px"}` + extra + `},"columns":[` + strings.Join(columns, ",") + `]}`
}

func mjmlCol(grid int, modules ...string) string {
	return `{"grid-columns":` + strconv.Itoa(grid) + `,"style":{"padding-top":"5px","padding-right":"0px","padding-bottom":"5px","padding-left":"0px"},"modules":[` + strings.Join(modules, ",") + `]}`
}

func mjmlModule(kind, descriptor string) string {
	return `{"type":"mailup-bee-newsletter-modules-` + kind + `","descriptor":` + descriptor + `}`
}

func TestMJML(t *testing.T) {
	tests := []struct {
		name    string
		rows    string
		want    []string
		notWant []string
	}{
		{
			name: "head and body",
			rows: `[]`,
			want: []string{`<mjml>`, `<mj-title>T</mj-title>`, `<mj-breakpoint width="620px" />`,
				`<mj-font name="Lato" href="https://fonts.example/css?family=Lato" />`,
				`<mj-all font-family="Arial, sans-serif" />`, `<mj-text color="#111111" padding="0" />`,
				`<mj-style>p{margin:0} a{color:#0068A5}</mj-style>`,
				`<mj-body width="600px" background-color="#eeeeee">`, `</mj-body>`, `</mjml>`},
			notWant: []string{`<mj-section background`, `mobile_hide`},
		},
		{
			name: "columns from grid",
			rows: `[` + mjmlRow("", mjmlCol(4), mjmlCol(8)) + `]`,
			want: []string{`<mj-section background-color="#ffffff" padding="4px 0px 0px 0px">`,
				`<mj-column width="33.3333%" padding="5px 0px">`, `<mj-column width="66.6667%" padding="5px 0px">`},
			notWant: []string{`<mj-group>`, `<mj-wrapper`},
		},
		{
			name: "coloured band and box use a wrapper",
			rows: `[{"container":{"style":{"background-color":"#000000"}},"content":{"style":{"background-color":"#ffffff"}},"columns":[` + mjmlCol(12) + `]}]`,
			want: []string{"<mj-wrapper full-width=\"full-width\" padding=\"0\" background-color=\"#000000\">\n<mj-section background-color=\"#ffffff\" padding=\"0px\">",
				"</mj-section>\n</mj-wrapper>"},
		},
		{
			name:    "coloured band alone is a full-width section",
			rows:    `[{"container":{"style":{"background-color":"#000000","background-image":"url('https://img.example/bg.png')","background-repeat":"no-repeat"}},"content":{"style":{"background-color":"transparent"}},"columns":[` + mjmlCol(12) + `]}]`,
			want:    []string{`<mj-section full-width="full-width" background-color="#000000" background-url="https://img.example/bg.png" background-repeat="no-repeat" padding="0px">`},
			notWant: []string{`<mj-wrapper`},
		},
		{
			name:    "no stacking uses a group",
			rows:    `[` + mjmlRow(`,"computedStyle":{"rowColStackOnMobile":false}`, mjmlCol(6), mjmlCol(6)) + `]`,
			want:    []string{"<mj-group>\n<mj-column", "</mj-column>\n</mj-group>\n</mj-section>"},
			notWant: []string{`direction="rtl"`},
		},
		{
			name: "paragraph keeps its html and typography",
			rows: `[` + mjmlRow("", mjmlCol(12, mjmlModule("paragraph",
				`{"paragraph":{"html":"<p>Hi {{ name }} &amp; <a href=\"https://x.example/?a=1&b=2\">you</a></p>","style":{"color":"#333","font-size":"16px","font-family":"inherit","text-align":"center","line-height":"150%"}},"style":{"padding-top":"10px","padding-right":"10px","padding-bottom":"10px","padding-left":"10px"}}`))) + `]`,
			want: []string{`<mj-text padding="10px" color="#333" font-size="16px" line-height="150%" align="center">` +
				`<p>Hi {{ name }} &amp; <a href="https://x.example/?a=1&b=2">you</a></p></mj-text>`},
			notWant: []string{`font-family="inherit"`},
		},
		{
			name: "heading",
			rows: `[` + mjmlRow("", mjmlCol(12, mjmlModule("heading",
				`{"heading":{"title":"h2","text":"<strong>Big</strong>","style":{"font-size":"33px","font-weight":"700"}}}`))) + `]`,
			want: []string{`font-size="33px" font-weight="700">` + `<h2 style="margin:0;font-size:inherit;font-weight:700"><strong>Big</strong></h2></mj-text>`},
		},
		{
			name: "image with fixed width and link",
			rows: `[` + mjmlRow("", mjmlCol(12, mjmlModule("image",
				`{"image":{"src":"https://img.example/a.png","alt":"A \"quoted\" alt","href":"https://example.com","target":"_blank"},"computedStyle":{"class":"center fixedwidth","width":245.5}}`))) + `]`,
			want: []string{`<mj-image src="https://img.example/a.png" alt="A &quot;quoted&quot; alt" href="https://example.com" target="_blank" width="245.5px" align="center" padding="0px" />`},
		},
		{
			name: "full-width image has no width",
			rows: `[` + mjmlRow("", mjmlCol(12, mjmlModule("image",
				`{"image":{"src":"a.png"},"computedStyle":{"class":"center fullwidth","width":"600px"}}`))) + `]`,
			want:    []string{`<mj-image src="a.png" align="center"`},
			notWant: []string{`width="600px" align`},
		},
		{
			name: "button",
			rows: `[` + mjmlRow("", mjmlCol(12, mjmlModule("button",
				`{"button":{"label":"<p>Buy</p>","href":"https://shop.example","style":{"background-color":"#ff0000","color":"#fff","border-radius":"4px","border-top":"1px solid #000","border-right":"1px solid #000","border-bottom":"1px solid #000","border-left":"1px solid #000","padding-top":"5px","padding-right":"20px","padding-bottom":"5px","padding-left":"20px","width":"auto"}},"style":{"text-align":"right","padding-top":"10px","padding-right":"10px","padding-bottom":"10px","padding-left":"10px"}}`))) + `]`,
			want: []string{`<mj-button href="https://shop.example" background-color="#ff0000" color="#fff" border-radius="4px" border="1px solid #000" inner-padding="5px 20px" padding="10px" align="right"><p>Buy</p></mj-button>`},
		},
		{
			name: "divider",
			rows: `[` + mjmlRow("", mjmlCol(12, mjmlModule("divider",
				`{"divider":{"style":{"border-top":"2px dotted #BBBBBB","width":"30%"}},"computedStyle":{"align":"left"}}`))) + `]`,
			want: []string{`<mj-divider border-width="2px" border-style="dotted" border-color="#BBBBBB" width="30%" align="left" padding="0px" />`},
		},
		{
			name: "spacer",
			rows: `[` + mjmlRow("", mjmlCol(12, mjmlModule("spacer", `{"spacer":{"style":{"height":"40px"}}}`))) + `]`,
			want: []string{`<mj-spacer height="40px" />`},
		},
		{
			name: "social",
			rows: `[` + mjmlRow("", mjmlCol(12, mjmlModule("social",
				`{"iconsList":{"icons":[{"type":"follow","name":"Facebook","image":{"src":"https://i.example/fb.png","href":"https://facebook.com/x","alt":"Facebook"}}]},"computedStyle":{"iconsDefaultWidth":32,"padding":"0 5px 0 0"},"style":{"text-align":"center"}}`))) + `]`,
			want: []string{`<mj-social mode="horizontal" align="center" padding="0px" icon-size="32px" inner-padding="0 5px 0 0">`,
				`<mj-social-element src="https://i.example/fb.png" href="https://facebook.com/x" alt="Facebook" background-color="transparent"></mj-social-element>`},
		},
		{
			name: "hidden on mobile gets a class and the style",
			rows: `[` + mjmlRow("", mjmlCol(12, mjmlModule("spacer", `{"spacer":{"style":{"height":"10px"}},"computedStyle":{"hideContentOnMobile":true}}`))) + `]`,
			want: []string{`<mj-spacer height="10px" css-class="mobile_hide" />`, `@media (max-width:620px){.mobile_hide{`},
		},
		{
			name:    "content cannot close an mjml tag",
			rows:    `[` + mjmlRow("", mjmlCol(12, mjmlModule("html", `{"html":{"html":"x</mj-text></mj-column><mj-raw>y<mjml></mjml>"}}`))) + `]`,
			want:    []string{`x&lt;/mj-text>&lt;/mj-column>&lt;mj-raw>y&lt;mjml>&lt;/mjml></mj-text>`},
			notWant: []string{`<mj-raw>`},
		},
		{
			name:    "forms and unknown modules are left out",
			rows:    `[` + mjmlRow("", mjmlCol(12, mjmlModule("form", `{"form":{}}`), mjmlModule("mystery", `{}`))) + `]`,
			want:    []string{"<mj-column width=\"100%\" padding=\"5px 0px\">\n</mj-column>"},
			notWant: []string{`form`, `mystery`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Export(mjmlDesign(t, tt.rows))
			if err != nil {
				t.Fatal(err)
			}
			got := string(out)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in\n%s", w, got)
				}
			}
			if err := mjmlBalanced(got); err != "" {
				t.Errorf("unbalanced MJML: %s\n%s", err, got)
			}
		})
	}
}

func TestMJMLNil(t *testing.T) {
	if _, err := Export(nil); err == nil {
		t.Fatal("Export(nil): no error")
	}
}

// TestMJMLCorpus exports every real design: the MJML must be balanced,
// have a section per row and carry every image source of the design.
func TestMJMLCorpus(t *testing.T) {
	designs := designtest.OwnAndCorpus(t, false)
	for _, name := range designtest.Names(designs) {
		t.Run(name, func(t *testing.T) {
			d, err := design.Decode(designs[name])
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, err := Export(d)
			if err != nil {
				t.Fatal(err)
			}
			got := string(out)
			if msg := mjmlBalanced(got); msg != "" {
				t.Fatalf("unbalanced MJML: %s", msg)
			}
			_, body, _ := strings.Cut(got, "<mj-body")
			if n := strings.Count(body, "<mj-section"); n != len(d.Page.Rows) {
				t.Errorf("%d sections for %d rows", n, len(d.Page.Rows))
			}
			for _, src := range inventory.Of(d).Srcs {
				if !strings.Contains(got, `src="`+mjmlText(src)+`"`) {
					t.Errorf("image source %q missing", src)
				}
			}
		})
	}
}

// mjmlBalanced checks that every <mj-x> is closed in order (content inside
// ending tags is not inspected beyond the mj- tags). It returns "" when the
// document is balanced.
func mjmlBalanced(doc string) string {
	var stack []string
	for i := 0; i < len(doc); i++ {
		if doc[i] != '<' {
			continue
		}
		rest := doc[i+1:]
		closing := strings.HasPrefix(rest, "/")
		if closing {
			rest = rest[1:]
		}
		if !strings.HasPrefix(rest, "mj") {
			continue
		}
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return "tag not ended at offset " + strconv.Itoa(i)
		}
		tag := rest[:end]
		name := strings.Fields(strings.TrimSuffix(tag, "/"))[0]
		switch {
		case closing:
			if len(stack) == 0 || stack[len(stack)-1] != name {
				return "unexpected </" + name + ">"
			}
			stack = stack[:len(stack)-1]
		case strings.HasSuffix(tag, "/"):
			// self-closing
		default:
			stack = append(stack, name)
		}
	}
	if len(stack) > 0 {
		return "unclosed <" + stack[len(stack)-1] + ">"
	}
	return ""
}

// FuzzMJML exports whatever design.Decode accepts: the export must not
// panic, and the MJML must stay balanced whatever the design's strings hold.
func FuzzMJML(f *testing.F) {
	for _, name := range []string{"fixture-module-button", "fixture-row-columns", "fixture-body-popup-mobile-width"} {
		f.Add(designtest.OwnFile(f, name))
	}
	f.Add([]byte(`{"page":{"body":{},"rows":[{"columns":[{"grid-columns":12,"modules":[` +
		`{"type":"mailup-bee-newsletter-modules-button","descriptor":{"button":{"label":"</mj-button><mj-raw>","href":"\"><x"}}}]}]}]}}`))
	f.Add([]byte(`{"page":{"rows":[{"container":{"style":{"background-color":"#000","background-image":"url(\")"}},"columns":[{"grid-columns":0,"modules":[]}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := design.Decode(data)
		if err != nil {
			return
		}
		out, err := Export(d)
		if err != nil {
			t.Fatal(err)
		}
		if msg := mjmlBalanced(string(out)); msg != "" {
			t.Fatalf("unbalanced MJML: %s\n%s", msg, out)
		}
	})
}
