package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// Credentials of the content_service configured by this test only.
const (
	testToken      = "corpus-layout-token"
	testSigningKey = "corpus-layout-signing-key-0123456789abcdef"
)

// designRow is what a design's JSON says about one row's mobile and
// desktop behaviour, read here independently of the design package so that
// a misreading there shows up as a layout failure.
type designRow struct {
	columns                 int
	modules                 [][]designModule // per column
	stack, reverse          bool
	hideMobile, hideDesktop bool
	valign                  string
}

// designLayout is what the checks need of a design.
type designLayout struct {
	messageWidth int // body.content.computedStyle.messageWidth in px, 0 if unreadable
	rows         []designRow
}

// readDesignLayout reads a design tolerantly (the corpus has [] for {} and
// strings for booleans).
func readDesignLayout(data []byte) (designLayout, error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return designLayout{}, err
	}
	page, _ := doc["page"].(map[string]any)
	rows, ok := page["rows"].([]any)
	if !ok {
		return designLayout{}, fmt.Errorf("no page.rows array")
	}
	var layout designLayout
	body, _ := page["body"].(map[string]any)
	content, _ := body["content"].(map[string]any)
	computed, _ := content["computedStyle"].(map[string]any)
	if mw, ok := computed["messageWidth"].(string); ok {
		fmt.Sscanf(mw, "%dpx", &layout.messageWidth)
	}
	out := make([]designRow, len(rows))
	for i, r := range rows {
		row, _ := r.(map[string]any)
		cols, _ := row["columns"].([]any)
		content, _ := row["content"].(map[string]any)
		cs, _ := content["computedStyle"].(map[string]any)
		dr := designRow{
			columns:     len(cols),
			stack:       truthy(cs["rowColStackOnMobile"], true),
			hideMobile:  truthy(cs["hideContentOnMobile"], false),
			hideDesktop: truthy(cs["hideContentOnDesktop"], false),
		}
		dr.reverse = dr.stack && truthy(cs["rowReverseColStackOnMobile"], false)
		for _, c := range cols {
			col, _ := c.(map[string]any)
			mods, _ := col["modules"].([]any)
			var ms []designModule
			for _, m := range mods {
				if dm, ok := readModule(m); ok {
					ms = append(ms, dm)
				}
			}
			dr.modules = append(dr.modules, ms)
		}
		dr.valign, _ = cs["verticalAlign"].(string)
		if dr.valign == "" {
			dr.valign, _ = cs["vertical-align"].(string)
		}
		out[i] = dr
	}
	layout.rows = out
	return layout, nil
}

// designModule is a module that renders as a block: its kind and
// visibility.
type designModule struct {
	kind                    string
	hideMobile, hideDesktop bool
	// Typography of heading and paragraph modules, as written ("" when
	// unset): font-size on desktop and on mobile (mobileStyle), weight,
	// colour.
	fontSize, mobileFontSize, fontWeight, color string
}

// blockKinds are the module kinds that render as a block of their own;
// empty modules and kinds the renderer does not know render nothing.
var blockKinds = map[string]bool{
	"text": true, "paragraph": true, "heading": true, "list": true, "image": true, "button": true,
	"divider": true, "spacer": true, "social": true, "icons": true, "menu": true, "html": true,
	"video": true, "table": true, "form": true,
}

func readModule(v any) (designModule, bool) {
	m, _ := v.(map[string]any)
	typ, _ := m["type"].(string)
	kind := strings.TrimPrefix(typ, "mailup-bee-newsletter-modules-")
	if kind == "addon" {
		kind, _ = m["contentType"].(string)
	}
	if !blockKinds[kind] {
		return designModule{}, false
	}
	desc, _ := m["descriptor"].(map[string]any)
	cs, _ := desc["computedStyle"].(map[string]any)
	dm := designModule{
		kind:        kind,
		hideMobile:  truthy(cs["hideContentOnMobile"], false),
		hideDesktop: truthy(cs["hideContentOnDesktop"], false),
	}
	if kind == "heading" || kind == "paragraph" {
		content, _ := desc[kind].(map[string]any)
		style, _ := content["style"].(map[string]any)
		mobile, _ := desc["mobileStyle"].(map[string]any)
		str := func(m map[string]any, k string) string { v, _ := m[k].(string); return strings.TrimSpace(v) }
		dm.fontSize, dm.fontWeight, dm.color = str(style, "font-size"), str(style, "font-weight"), str(style, "color")
		dm.mobileFontSize = str(mobile, "font-size")
	}
	return dm, true
}

// checkFont compares a text block's computed typography with the design.
func checkFont(w designModule, f *fontProbe, mobileView bool) []string {
	if f == nil {
		return []string{"no text element found"}
	}
	var problems []string
	size := w.fontSize
	if mobileView && w.mobileFontSize != "" {
		size = w.mobileFontSize
	}
	if want, ok := pxValue(size); ok {
		if got, ok := pxValue(f.Size); !ok || math.Abs(got-want) > 0.5 {
			problems = append(problems, fmt.Sprintf("font-size %s, design %s", f.Size, size))
		}
	}
	if want := cssWeight(w.fontWeight); want != "" && w.kind == "heading" && f.Weight != want {
		problems = append(problems, fmt.Sprintf("font-weight %s, design %q", f.Weight, w.fontWeight))
	}
	if want, ok := cssRGB(w.color); ok && f.Color != want {
		problems = append(problems, fmt.Sprintf("color %s, design %s", f.Color, w.color))
	}
	return problems
}

func pxValue(s string) (float64, bool) {
	var v float64
	if _, err := fmt.Sscanf(s, "%gpx", &v); err != nil || !strings.HasSuffix(s, "px") {
		return 0, false
	}
	return v, true
}

// cssWeight is the computed form of a font-weight value ("" if unknown).
func cssWeight(s string) string {
	switch strings.ToLower(s) {
	case "normal":
		return "400"
	case "bold":
		return "700"
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 100 && n <= 900 {
		return s
	}
	return ""
}

// cssRGB is the computed form of a #RGB or #RRGGBB colour.
func cssRGB(s string) (string, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	if len(s) != 6 {
		return "", false
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("rgb(%d, %d, %d)", v>>16, v>>8&0xff, v&0xff), true
}

// checkBlocks: every module of the design is a block of its kind, in its
// column and in order; blocks hidden on this view (mobile or desktop) do
// not show while the others do; headings and paragraphs show in the
// design's font size (mobile size on phones), weight (headings) and
// colour.
func checkBlocks(m *measurement, rows []designRow, mobileView bool) (problems []string, checked int) {
	for _, r := range m.Rows {
		if r.Number < 1 || r.Number > len(rows) {
			continue
		}
		dr := rows[r.Number-1]
		blocks := r.Blocks
		if r.DOMReversed {
			blocks = slices.Clone(blocks)
			slices.Reverse(blocks)
		}
		if len(blocks) != len(dr.modules) {
			continue // reported by the column count check
		}
		for ci, want := range dr.modules {
			got := blocks[ci]
			var gotKinds, wantKinds []string
			for _, b := range got {
				gotKinds = append(gotKinds, b.Kind)
			}
			for _, w := range want {
				wantKinds = append(wantKinds, w.kind)
			}
			if !slices.Equal(gotKinds, wantKinds) {
				problems = append(problems, fmt.Sprintf("row %d column %d: blocks %v in the HTML, modules %v in the design", r.Number, ci+1, gotKinds, wantKinds))
				continue
			}
			checked += len(want)
			if !r.Box.visible() {
				continue
			}
			for bi, w := range want {
				hidden := w.hideDesktop
				view := "desktop"
				if mobileView {
					hidden, view = w.hideMobile, "mobile"
				}
				shows := got[bi].Box.visible()
				if shows == hidden {
					problems = append(problems, fmt.Sprintf("row %d column %d block %d (%s, hidden on %s: %v) shows on %s: %v", r.Number, ci+1, bi+1, w.kind, view, hidden, view, shows))
				}
				if shows && (w.kind == "heading" || w.kind == "paragraph") {
					for _, p := range checkFont(w, got[bi].Font, mobileView) {
						problems = append(problems, fmt.Sprintf("row %d column %d block %d (%s) on %s: %s", r.Number, ci+1, bi+1, w.kind, view, p))
					}
				}
			}
		}
	}
	return problems, checked
}

func truthy(v any, def bool) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "1":
			return true
		case "false", "0":
			return false
		}
	case float64:
		return x != 0
	}
	return def
}

// corpusDesignFiles lists every whole test design: the project's own
// and, when configured, the corpus's top-level emails, pages and popups
// and the pairs' popups and message (copies with identical bytes once).
func corpusDesignFiles(t *testing.T) map[string][]byte {
	t.Helper()
	all := designtest.OwnAndCorpus(t, true)
	out := map[string][]byte{}
	seen := map[string]bool{}
	for _, name := range designtest.Names(all) {
		data := all[name]
		if seen[string(data)] {
			continue
		}
		seen[string(data)] = true
		out[strings.Replace(name, "pairs-", "pairs__", 1)] = data
	}
	if corpusDir != "" && len(out) < 40 {
		t.Fatalf("found %d designs under %s; the corpus is incomplete", len(out), corpusDir)
	}
	return out
}

// TestOurHTMLLayout renders every corpus design through content_service in
// Caddy (POST /v1/message/html, as the editor's export does), serves the
// result from the same Caddy, and runs the layout checks in Chromium with
// expectations taken from the design JSON.
func TestOurHTMLLayout(t *testing.T) {
	oursDir, oursPath := pageDir(t)
	base := startCaddy(t)
	designs := corpusDesignFiles(t)
	names := make([]string, 0, len(designs))
	for n := range designs {
		names = append(names, n)
	}
	sort.Strings(names)

	// Render all first: the browser then only reads files.
	layoutOf := map[string]designLayout{}
	client := &http.Client{Timeout: 30 * time.Second}
	for _, name := range names {
		data := designs[name]
		layout, err := readDesignLayout(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		layoutOf[name] = layout
		resp, body := postDesign(t, client, base+"/v1/message/html", data)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: POST /v1/message/html: %d %s: %.300s", name, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if err := os.WriteFile(filepath.Join(oursDir, name+".html"), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	tb := sharedTab(t)
	// Screenshots of an earlier run must not linger beside this run's.
	if err := os.RemoveAll(filepath.Join(artifactsDir, "ours")); err != nil {
		t.Fatal(err)
	}

	multiColumnRows, blocksChecked := 0, 0
	for _, name := range names {
		layout := layoutOf[name]
		rows := layout.rows
		t.Run(name, func(t *testing.T) {
			var missing []string
			expect := func(r rowProbe) (rowExpectation, bool) {
				if r.Number < 1 || r.Number > len(rows) {
					missing = append(missing, fmt.Sprintf("row %q has no design row number", r.Path))
					return rowExpectation{}, false
				}
				dr := rows[r.Number-1]
				if len(r.Cols) != dr.columns && dr.columns > 1 {
					missing = append(missing, fmt.Sprintf("row %d has %d columns in the HTML, %d in the design", r.Number, len(r.Cols), dr.columns))
				}
				return rowExpectation{stack: dr.stack, reverse: dr.reverse, hiddenMobile: dr.hideMobile, hiddenDesktop: dr.hideDesktop, valign: dr.valign}, true
			}
			// "Desktop" is above the design's breakpoint (message width +
			// 20 px): 800 px, or more for the 1440 px page designs.
			wide := max(desktopWidth, layout.messageWidth+40)
			mobile, desktop := checkPage(t, tb, base+oursPath+name+".html", "ours", name, wide, expect)
			if ps := checkFilled(mobile); len(ps) > 0 {
				t.Errorf("at %d px:%s", mobileWidth, joinProblems(ps))
			}
			if ps := checkFilled(desktop); len(ps) > 0 {
				t.Errorf("at %d px:%s", wide, joinProblems(ps))
			}
			ps, n := checkBlocks(mobile, rows, true)
			if len(ps) > 0 {
				t.Errorf("blocks at %d px:%s", mobileWidth, joinProblems(ps))
			}
			blocksChecked += n
			if ps, _ := checkBlocks(desktop, rows, false); len(ps) > 0 {
				t.Errorf("blocks at %d px:%s", wide, joinProblems(ps))
			}
			// Every design row must be found in the markup, or the
			// checks above would pass by not seeing it.
			found := map[int]bool{}
			for _, r := range mobile.Rows {
				found[r.Number] = true
			}
			for i, dr := range rows {
				if !found[i+1] {
					missing = append(missing, fmt.Sprintf("design row %d not found in the HTML", i+1))
				}
				if dr.columns > 1 {
					multiColumnRows++
				}
			}
			if len(missing) > 0 {
				t.Errorf("markup does not match the design:%s", joinProblems(missing))
			}
		})
	}
	t.Logf("%d designs, %d multi-column rows, %d blocks checked at %d px and at desktop width", len(names), multiColumnRows, blocksChecked, mobileWidth)
	// Blocks found in the markup and matched to modules: if the probe no
	// longer recognised them, the checks above would pass vacuously.
	minBlocks := 80 // the own designs alone
	if corpusDir != "" {
		minBlocks = 1000
	}
	if blocksChecked < minBlocks {
		t.Errorf("only %d blocks matched to design modules; the block probe no longer matches the markup", blocksChecked)
	}
}

// postDesign sends a design to an export endpoint of the test's
// content_service and returns the response and its body.
func postDesign(t *testing.T, client *http.Client, endpoint string, data []byte) (*http.Response, []byte) {
	t.Helper()
	send := func() (*http.Response, error) {
		req, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		return client.Do(req)
	}
	resp, err := send()
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestPlainTextThroughContentService checks the text export end to end:
// for every corpus design, POST /v1/message/plain-text through Caddy
// answers with exactly what render.PlainText makes of the design, as
// text/plain, with the renderer's warnings in X-Design-Warnings.
func TestPlainTextThroughContentService(t *testing.T) {
	base := startCaddy(t)
	designs := corpusDesignFiles(t)
	client := &http.Client{Timeout: 30 * time.Second}
	for name, data := range designs {
		t.Run(name, func(t *testing.T) {
			d, err := design.Decode(data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			want, err := render.PlainText(d)
			if err != nil {
				t.Fatalf("PlainText: %v", err)
			}
			resp, body := postDesign(t, client, base+"/v1/message/plain-text", data)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %.300s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type %q, want text/plain; charset=utf-8", ct)
			}
			if !bytes.Equal(body, want.Body) {
				t.Errorf("body differs from render.PlainText:\n got %.200q\nwant %.200q", body, want.Body)
			}
			if got := len(resp.Header.Values("X-Design-Warnings")); (got == 0) != (len(want.Warnings) == 0) {
				t.Errorf("%d X-Design-Warnings headers for %d renderer warnings", got, len(want.Warnings))
			}
		})
	}
}
