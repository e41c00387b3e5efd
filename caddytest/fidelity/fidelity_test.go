package fidelity

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// mobileWidth is the phone width every pair is also measured at.
const mobileWidth = 375

// target is what a design must reach at one width: defaultTarget unless
// limits names a measured exception.
type target struct {
	heightDiff float64 // largest |our height / the vendor's − 1|
	share      float64 // smallest share of blocks within tolerance
	offset     float64 // largest vertical offset of a block, px
}

var defaultTarget = target{heightDiff: 0.03, share: 0.95, offset: 16}

// limits holds, per "design@width", the targets a design is held to where
// the default cannot be met, each with the measured reason (see
// docs/renderer.md "Remaining gaps"). Keep these tight: they are what the
// renderer achieves, plus a margin for font rasterisation.
var limits = map[string]target{
	// The vendor's popup export has no rules for its icons block
	// (.bee-icon…: its popup host page supplies them), so standalone its
	// icons stack one per line with the labels under them: 90 px and
	// 65 px against our 56 and 28, which moves every block below.
	"popup-WorldMusicDay@400": {heightDiff: 0.21, share: 0.42, offset: 72},
	"popup-WorldMusicDay@375": {heightDiff: 0.21, share: 0.42, offset: 72},
	"popup-WorldMusicDay@800": {heightDiff: 0.18, share: 0.42, offset: 44},
}

func targetFor(name string, width int) target {
	if t, ok := limits[fmt.Sprintf("%s@%d", name, width)]; ok {
		return t
	}
	return defaultTarget
}

// TestFidelity lays out, for every design with the vendor's HTML beside
// it, the vendor's HTML and ours at the design's width and at 375 px, and
// compares them block by block.
func TestFidelity(t *testing.T) {
	pairs := designtest.Pairs(t)
	base := startCaddy(t)
	tab := sharedTab(t)
	dir, urlPath := pageDir(t)
	outDir := artifactsDir()
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var results []result
	for _, p := range pairs {
		d, err := design.Decode(p.Design)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		mods := designBlocks(d)
		for _, variant := range []string{"", "email", "page"} {
			vendorHTML, ok := p.Vendor[variant]
			if !ok {
				continue
			}
			// Ours is what the content service answers for the
			// collection the vendor's export is of (its popups are the
			// pairs without a variant), which must be the renderer's in
			// that collection's layout.
			collection := map[string]string{"": "popup", "email": "message", "page": "page"}[variant]
			if variant == "" && !strings.Contains(p.Name, "popup") {
				collection = "message"
			}
			lay := map[string]render.Layout{"message": render.LayoutEmail, "page": render.LayoutPage, "popup": render.LayoutPopup}[collection]
			out, err := render.HTMLWithLimits(d, render.Limits{Layout: lay})
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			ours := exportHTML(t, collection, p.Design)
			if !bytes.Equal(ours, out.Body) {
				t.Errorf("%s: /v1/%s/html differs from the renderer's %s layout", p.Name, collection, lay)
			}
			name := p.Name
			if variant != "" {
				name += "." + variant
			}
			if err := os.WriteFile(filepath.Join(dir, name+".vendor.html"), hostPage(vendorHTML), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+".ours.html"), hostPage(ours), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, width := range widths(d) {
				t.Run(fmt.Sprintf("%s@%d", name, width), func(t *testing.T) {
					var vl, ol layout
					var vShot, oShot []byte
					for _, side := range []struct {
						file string
						l    *layout
						shot *[]byte
					}{{name + ".vendor.html", &vl, &vShot}, {name + ".ours.html", &ol, &oShot}} {
						if err := load(tab, base+urlPath+side.file, width); err != nil {
							t.Fatalf("loading %s: %v", side.file, err)
						}
						if err := eval(tab, blockProbe, side.l); err != nil {
							t.Fatalf("measuring %s: %v", side.file, err)
						}
						shot, err := screenshot(tab, width)
						if err != nil {
							t.Fatalf("screenshot of %s: %v", side.file, err)
						}
						*side.shot = shot
					}
					attachPaths(ol.Blocks, mods)
					r := compare(name, width, vl, ol)
					results = append(results, r)
					png := filepath.Join(outDir, fmt.Sprintf("%s-%d.png", name, width))
					if err := writeSideBySide(png, vShot, oShot, r); err != nil {
						t.Errorf("artifact: %v", err)
					}
					checkTargets(t, r, targetFor(name, width), png)
				})
			}
		}
	}
	table := summaryTable(results)
	t.Log("\n" + table)
	if err := os.WriteFile(filepath.Join(outDir, "summary.md"), []byte(table), 0o644); err != nil {
		t.Error(err)
	}
}

// checkTargets fails the test when r falls under tg, naming the worst
// blocks with the JSON path of the module each renders.
func checkTargets(t *testing.T, r result, tg target, png string) {
	t.Helper()
	var problems []string
	if r.heightRatio == 0 || math.Abs(r.heightRatio-1) > tg.heightDiff+1e-9 {
		problems = append(problems, fmt.Sprintf("document height %.1f %% of the vendor's (target within %.1f %%)", 100*r.heightRatio, 100*tg.heightDiff))
	}
	if r.share() < tg.share-1e-9 {
		problems = append(problems, fmt.Sprintf("%d of %d blocks within 4 px or 2 %% (%.0f %%, target %.0f %%)", r.ok, r.blocks, 100*r.share(), 100*tg.share))
	}
	if r.worst > tg.offset {
		problems = append(problems, fmt.Sprintf("a block %.0f px off vertically (target %.0f px)", r.worst, tg.offset))
	}
	if len(problems) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %d px: %s\nworst blocks (ours vs the vendor's):", r.design, r.width, strings.Join(problems, "; "))
	for _, p := range r.worstPairs(5) {
		b.WriteString("\n  " + p.String())
	}
	fmt.Fprintf(&b, "\nside by side (vendor left, ours right): %s", png)
	t.Error(b.String())
}

// widths are the viewport widths a design is compared at: its own width
// and a phone's, and a desktop's. Both renderers put
// their breakpoint 20 px above the design's width, so at the design's
// own width both lay it out as on a phone; 800 px shows the desktop
// layout (columns side by side, their vertical alignment) of every
// design no wider than that.
func widths(d *design.Design) []int {
	var out []int
	if w := d.Page.Body.Width; w > 0 && w != mobileWidth {
		out = append(out, w)
	}
	out = append(out, mobileWidth)
	if d.Page.Body.Width+20 < desktopWidth {
		out = append(out, desktopWidth)
	}
	return out
}

// hostPage makes a complete standards-mode document of a popup's HTML:
// the vendor's popup builder exports a fragment (with a byte-order mark),
// and so does our popup layout, that a host page embeds at the top of an
// unstyled body. A whole document is returned as it is.
func hostPage(vendor []byte) []byte {
	vendor = bytes.TrimPrefix(vendor, []byte("\xef\xbb\xbf"))
	head := bytes.ToLower(bytes.TrimSpace(vendor[:min(len(vendor), 64)]))
	if bytes.HasPrefix(head, []byte("<!doctype")) || bytes.HasPrefix(head, []byte("<html")) {
		return vendor
	}
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1.0"><title></title></head><body style="margin:0;padding:0">`)
	b.Write(vendor)
	b.WriteString("</body></html>")
	return b.Bytes()
}
