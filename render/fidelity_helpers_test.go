package render

import "testing"

func TestInlineLabel(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Plain", "Plain"},
		{"<p>One</p>", "One"},
		{`<div class="txtTinyMce-wrapper" style="x"><p style="y"><strong>A</strong> b<br>c</p></div>`, `<span style="y"><strong>A</strong> b<br>c</span>`},
		{`<P class=k>Upper</P>`, `<span class=k>Upper</span>`},
		{`<p >Space</p>`, "Space"},
		{" <div><div><p>Deep</p></div></div> ", "Deep"},
		{"<p>One</p><p>Two</p>", "<p>One</p><p>Two</p>"},
		{"<p>One<div>block</div></p>", "<p>One<div>block</div></p>"},
		{"<p>One</p>tail", "<p>One</p>tail"},
		{"<p>One</p><script>x()</script>", "<p>One</p><script>x()</script>"},
		{"<div><p>Unclosed</p>", "<div><p>Unclosed</p>"},
		{"<p>Unclosed", "<p>Unclosed"},
		{"<span>Inline only</span>", "<span>Inline only</span>"},
		{"<p><!-- c -->x</p>", "<!-- c -->x"},
	} {
		if got := inlineLabel(c.in); got != c.want {
			t.Errorf("inlineLabel(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestBgPosition(t *testing.T) {
	for _, c := range []struct {
		in   string
		x, y float64
	}{
		{"", 0, 0},
		{"top left", 0, 0},
		{"left top", 0, 0},
		{"center top", 0.5, 0},
		{"top center", 0.5, 0},
		{"center", 0.5, 0.5},
		{"bottom", 0.5, 1},
		{"right", 1, 0.5},
		{"100% 100%", 1, 1},
		{"25% bottom", 0.25, 1},
		{"150% -20%", 1, 0},
		{"top bottom", 0, 0},
		{"10px 20px", 0, 0},
		{"left 10px top 5px", 0, 0},
	} {
		if x, y := bgPosition(c.in); x != c.x || y != c.y {
			t.Errorf("bgPosition(%q) = %v,%v, want %v,%v", c.in, x, y, c.x, c.y)
		}
	}
}
