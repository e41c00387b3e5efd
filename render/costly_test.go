package render

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// TestCostlyDesignsMemory: the costly designs (designtest.CostlyDesigns)
// of 256 KiB decode and render in memory proportional to their size.
// Reading each "font-family:" of a run to the style's end kept a family
// name of the whole rest each time: 64 KiB allocated 916 MB.
func TestCostlyDesignsMemory(t *testing.T) {
	for _, c := range designtest.CostlyDesigns() {
		if c.Check {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			data := c.Build(256 << 10)
			d, err := design.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			for name, render := range map[string]func(*design.Design) (*Output, error){"HTML": HTML, "text": PlainText} {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				if out, err := render(d); err == nil {
					out.Release()
				}
				runtime.ReadMemStats(&after)
				// x/net/html takes some 45 bytes for each attribute
				// of many-attributes, a five-byte " a123".
				if n := after.TotalAlloc - before.TotalAlloc; n > 64*uint64(len(data)) {
					t.Errorf("%s: %d bytes of JSON allocated %d bytes", name, len(data), n)
				}
			}
		})
	}
}

// TestRichDepthBound: rich text's allowed elements nest at most
// maxRichDepth deep; deeper start tags are left out, their text kept, and
// every element written is closed.
func TestRichDepthBound(t *testing.T) {
	out := rich(strings.Repeat("<b>", maxRichDepth+50)+"deep"+strings.Repeat("</b>", maxRichDepth+50)+"<i>after</i>", &richOpts{})
	if n := strings.Count(out, "<b"); n != maxRichDepth {
		t.Errorf("%d <b> written, want %d", n, maxRichDepth)
	}
	if strings.Count(out, "</b>") != strings.Count(out, "<b") || !strings.Contains(out, "deep") || !strings.HasSuffix(out, "<i>after</i>") {
		t.Errorf("unbalanced or lost: …%s", out[len(out)-min(len(out), 80):])
	}
}

// TestSimpleTokensAttributeBound: a tag of more than maxSimpleAttrs
// attributes is left to x/net/html, which does not compare each with
// those before it.
func TestSimpleTokensAttributeBound(t *testing.T) {
	tag := func(n int) string {
		var b strings.Builder
		b.WriteString("<span")
		for i := range n {
			fmt.Fprintf(&b, " a%d", i)
		}
		return b.String() + ">x</span>"
	}
	if !simpleTokens(tag(maxSimpleAttrs), nil) {
		t.Errorf("%d attributes: not the fast path", maxSimpleAttrs)
	}
	if simpleTokens(tag(maxSimpleAttrs+1), nil) {
		t.Errorf("%d attributes: the fast path", maxSimpleAttrs+1)
	}
}

// BenchmarkCostly decodes and renders (HTML) each costly design at two
// sizes: time per op should grow about 4× from one to the next.
func BenchmarkCostly(b *testing.B) {
	for _, c := range designtest.CostlyDesigns() {
		if c.Check {
			continue
		}
		for _, size := range []int{64 << 10, 256 << 10} {
			data := c.Build(size)
			b.Run(fmt.Sprintf("%s/%dKiB", c.Name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					d, err := design.Decode(data)
					if err != nil {
						b.Fatal(err)
					}
					if out, err := HTML(d); err == nil {
						out.Release()
					}
					d.Release()
				}
			})
		}
	}
}

// TestStyleURLsReadOnce: the URLs of an inline style are each read up to
// where CSS ends them, not to the end of the style: a style of one url(
// or quote after another is read in time linear in its size (a megabyte
// took 11 s and 55 s when each was read to the end).
func TestStyleURLsReadOnce(t *testing.T) {
	for _, tt := range []struct{ l, want string }{
		{`image-set("file:x" 1x, 'y' 2x)`, "file:x"},
		{`url('ms-msdt:/id' ) , url(x.png)`, "ms-msdt:/id"},
		{`url(file://h/s)x`, "file://h/s"},
		{`url("mailto:a?b='&attach=/x")`, "mailto:a?b='&attach=/x"},
		{`image-set("x.png" 1x, "mailto:a?b='&attach=/x" 2x)`, "mailto:a?b='&attach=/x"},
		{`url(x(javascript:1))`, ""},
	} {
		if got := refusedStyleURL(tt.l); got != tt.want {
			t.Errorf("refusedStyleURL(%q) = %q, want %q", tt.l, got, tt.want)
		}
	}
	const size = 1 << 20
	for _, style := range []string{
		"background:" + strings.Repeat("url(", size/4),
		"background:image-set(" + strings.Repeat("'", size),
		"background:image-set(" + strings.Repeat(`"mailto:?`, size/9),
	} {
		start := time.Now()
		rich(`<span style="`+style+`">x</span>`, nil)
		// Linear, a few tens of ms; 5 s leaves room for a busy machine.
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("a style of %q…, %d KiB: %v", style[:25], len(style)>>10, d)
		}
	}
}
