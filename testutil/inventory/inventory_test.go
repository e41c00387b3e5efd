package inventory

import (
	"reflect"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
)

// doc wraps one row in a minimal design.
func doc(row string) string { return `{"page":{"body":{},"rows":[` + row + `]}}` }

func eq(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestInventory(t *testing.T) {
	in := doc(`{"columns":[{"grid-columns":6,"modules":[
		{"type":"mailup-bee-newsletter-modules-text","descriptor":{"text":{"html":"<p>Hello <b>{{name}}</b>,&nbsp;<a href=\"https://x.test/?a=1&amp;b=2\">go</a><script>alert(1)</script><a href=\"javascript:alert(1)\">bad</a></p>"}}},
		{"type":"mailup-bee-newsletter-modules-image","descriptor":{"image":{"src":"$img$","href":"","alt":"A"}}},
		{"type":"mailup-bee-newsletter-modules-unknown-thing","descriptor":{"text":{"html":"ignored"}}}
	]},{"grid-columns":6,"modules":[
		{"type":"mailup-bee-newsletter-modules-button","descriptor":{"button":{"label":"<p>Buy</p>","href":"{{ buy_url }}"}}},
		{"type":"mailup-bee-newsletter-modules-button","descriptor":{"button":{"label":"<p><a href=\"https://x.test/in\">In</a></p>","href":"https://x.test/b"}}},
		{"type":"mailup-bee-newsletter-modules-button","descriptor":{"button":{"label":"<a href=\"https://x.test/own\">Own</a>","href":" "}}},
		{"type":"mailup-bee-newsletter-modules-menu","descriptor":{"menuItemsList":{"items":[{"text":"Home","link":{"href":"www.example.com"}},
			{"text":"<a href=\"https://x.test/in2\">In2</a>","link":{"href":"https://x.test/m"}},{"text":"<a href=\"https://x.test/own2\">Own2</a>","link":{}}]}}}
	]}]}`)
	d, err := design.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	inv := Of(d)
	want := []Item{
		{ItemText, "Hello"}, {ItemText, "{{name}}"}, {ItemText, ",\u00a0"}, {ItemHref, "https://x.test/?a=1&b=2"}, {ItemText, "go"}, {ItemText, "bad"},
		{ItemSrc, "$img$"},
		{ItemText, "Buy"}, {ItemHref, "{{ buy_url }}"},
		// A linked label's own links are not kept (a link holds none).
		{ItemText, "In"}, {ItemHref, "https://x.test/b"},
		{ItemHref, "https://x.test/own"}, {ItemText, "Own"},
		{ItemText, "Home"}, {ItemHref, "www.example.com"},
		{ItemText, "In2"}, {ItemHref, "https://x.test/m"},
		{ItemHref, "https://x.test/own2"}, {ItemText, "Own2"},
	}
	eq(t, inv.Items, want)
	eq(t, inv.Hrefs, []string{"https://x.test/?a=1&b=2", "{{ buy_url }}", "https://x.test/b", "https://x.test/own", "www.example.com", "https://x.test/m", "https://x.test/own2"})
}
