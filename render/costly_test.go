package render

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

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
