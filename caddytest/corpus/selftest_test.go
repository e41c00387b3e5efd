package corpus

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Hand-made pages with known layout faults: the checks must report each
// fault, and nothing on the sound pages. This is what shows that a green
// corpus run means something.
const selfTestHead = `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0"><style>
*{box-sizing:border-box} body{margin:0}
@media (max-width:620px){.row-content{width:100%!important}.stack .column{width:100%;display:block}}
</style></head><body>`

func twoColumnRow(n int, class string, trClass string) string {
	return `<table class="row row-` + strconv.Itoa(n) + `" width="100%"><tbody><tr><td>` +
		`<table class="row-content ` + class + `" width="600" style="width:600px;margin:0 auto"><tbody><tr class="` + trClass + `">` +
		`<td class="column column-1" width="50%">left</td><td class="column column-2" width="50%">right</td>` +
		`</tr></tbody></table></td></tr></tbody></table>`
}

func TestLayoutChecksCatchFaults(t *testing.T) {
	tests := []struct {
		name        string
		body        string
		wantMobile  []string // substrings of expected problems; none = must pass
		wantDesktop []string
	}{
		{
			name: "sound",
			body: twoColumnRow(1, "stack", "") + twoColumnRow(2, "", ""),
		},
		{
			name:       "fixed width table",
			body:       `<table width="600" style="width:600px"><tr><td>wide</td></tr></table>`,
			wantMobile: []string{"scrollWidth", "outside the viewport"},
		},
		{
			name:       "image wider than the phone",
			body:       `<div><img src="/nowhere.png" width="500" style="display:block"></div>`,
			wantMobile: []string{"outside the viewport"},
		},
		{
			name: "wide element clipped by its container",
			body: `<div style="overflow:hidden;width:100%"><div style="width:900px">clipped</div></div>`,
		},
		{
			name: "stacking row that does not stack",
			// Class "stack" promises stacking, but the row's own inline
			// width keeps it 600 px wide and the cells side by side.
			body:       `<style>.nostack-css .column{display:table-cell!important;width:50%!important}</style><div class="nostack-css">` + twoColumnRow(1, "stack", "") + `</div>`,
			wantMobile: []string{"row 1", "should stack"},
		},
		{
			name:       "reversed row stacked in document order",
			body:       twoColumnRow(3, "stack", "reverse"),
			wantMobile: []string{"row 3", "should stack (reversed)"},
		},
		{
			name: "content spilling into the next column",
			body: `<table class="row row-5" width="100%"><tbody><tr><td><table class="row-content" width="600" style="width:600px;margin:0 auto;table-layout:fixed"><tbody><tr>` +
				`<td class="column column-1" width="50%"><div style="width:400px">wide</div></td><td class="column column-2" width="50%">right</td>` +
				`</tr></tbody></table></td></tr></tbody></table>`,
			wantMobile:  []string{"row 5 column 1: content outside its column"},
			wantDesktop: []string{"row 5 column 1: content outside its column"},
		},
		{
			name: "layout table shown as a block",
			// Its row is laid out as narrow as its content (content
			// hidden on desktop once shrank so on phones).
			body:        `<table role="presentation" width="100%" style="display:block"><tr><td>short</td></tr></table>`,
			wantMobile:  []string{"layout table (display block)"},
			wantDesktop: []string{"layout table (display block)"},
		},
		{
			name:        "columns stacked on desktop",
			body:        `<style>.column{display:block!important;width:100%!important}</style>` + twoColumnRow(4, "stack", ""),
			wantDesktop: []string{"row 4", "side by side on desktop"},
		},
	}

	dir, dirPath := pageDir(t)
	for i, tc := range tests {
		name := "case" + strconv.Itoa(i) + ".html"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(selfTestHead+tc.body+`</body></html>`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := startCaddy(t)
	tb := sharedTab(t)

	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tb.setWidth(mobileWidth); err != nil {
				t.Fatal(err)
			}
			if err := tb.open(base + dirPath + "case" + strconv.Itoa(i) + ".html"); err != nil {
				t.Fatal(err)
			}
			m, err := tb.measure()
			if err != nil {
				t.Fatal(err)
			}
			assertProblems(t, "mobile", append(checkMobile(m, markupExpectation), checkFilled(m)...), tc.wantMobile)
			if err := tb.setWidth(desktopWidth); err != nil {
				t.Fatal(err)
			}
			if m, err = tb.measure(); err != nil {
				t.Fatal(err)
			}
			assertProblems(t, "desktop", append(checkDesktop(m, markupExpectation), checkFilled(m)...), tc.wantDesktop)
		})
	}
}

func assertProblems(t *testing.T, view string, got, want []string) {
	t.Helper()
	all := strings.Join(got, "\n")
	if len(want) == 0 && len(got) > 0 {
		t.Errorf("%s: unexpected problems:%s", view, joinProblems(got))
	}
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("%s: no problem mentions %q; got:%s", view, w, joinProblems(got))
		}
	}
}
