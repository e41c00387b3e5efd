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
		{"type":"mailup-bee-newsletter-modules-menu","descriptor":{"menuItemsList":{"items":[{"text":"Home","link":{"href":"www.example.com"}}]}}}
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
		{ItemText, "Home"}, {ItemHref, "www.example.com"},
	}
	eq(t, inv.Items, want)
	eq(t, inv.Hrefs, []string{"https://x.test/?a=1&b=2", "{{ buy_url }}", "www.example.com"})
}
