package designbridge

import (
	"slices"
	"testing"
)

// TestWithEchoForms: a secret of letters, digits and -_.~ has no other
// form; one holding characters that HTML, URLs or JSON escape is masked
// in the forms servers write it in too.
func TestWithEchoForms(t *testing.T) {
	for _, c := range []struct {
		name, secret string
		want         []string // among the forms
		count        int      // all of them, the secret included; 0: not checked
	}{
		{"letters and digits", "s3cr3t-Token_1.2~x", []string{"s3cr3t-Token_1.2~x"}, 1},
		{"too short to mask", "a+b/c", []string{"a+b/c"}, 1},
		{"base64", "tok+en/abc=", []string{
			"tok+en/abc=", "tok&#43;en/abc=", "tok%2Ben%2Fabc%3D", "tok%2ben%2fabc%3d", "tok+en%2Fabc=", "tok%2Ben/abc%3D", `tok+en\/abc=`,
			`tok\u002ben\/abc=`, `tok+en/abc\u003D`,
		}, 0},
		{"html characters", `a&b<c>d"e'f`, []string{
			"a&amp;b&lt;c&gt;d&#34;e&#39;f", "a&amp;b&lt;c&gt;d&quot;e&#x27;f", "a&amp;b&lt;c&gt;d&quot;e&#039;f", "a&amp;b&lt;c&gt;d&quot;e&apos;f",
			"a%26b%3Cc%3Ed%22e%27f", `a\u0026b\u003cc\u003ed\"e'f`,
		}, 0},
		{"space", "two words!", []string{"two%20words%21", "two+words%21", "two%20words!"}, 0},
		{"beyond ASCII", "clé/sécrète", []string{`cl\u00e9\/s\u00e9cr\u00e8te`, `cl\u00e9/s\u00e9cr\u00e8te`, "cl%C3%A9%2Fs%C3%A9cr%C3%A8te"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range withEchoForms([][]byte{[]byte(c.secret)}) {
				got = append(got, string(f))
			}
			if got[0] != c.secret {
				t.Errorf("first %q, want the secret", got[0])
			}
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("no form %q among %q", w, got)
				}
			}
			if c.count != 0 && len(got) != c.count {
				t.Errorf("%d forms %q, want %d", len(got), got, c.count)
			}
			for i, f := range got {
				if slices.Contains(got[i+1:], f) {
					t.Errorf("%q twice", f)
				}
			}
		})
	}
}
