package render

import "fmt"

// Layout is how the renderer lays out a design's rows and columns around
// its blocks. The blocks themselves (module_*.go) render the same in
// every layout; plain text does not depend on the layout.
type Layout int

const (
	// LayoutEmail is a complete email document: rows as centred
	// role="presentation" tables, columns as inline-block divs, ghost
	// tables for Outlook on Windows (the message collection).
	LayoutEmail Layout = iota
	// LayoutPage is a complete web page: rows and columns are divs laid
	// out with flexbox, stacked on phones by the one @media block (the
	// page collection, as the vendor's page exports are).
	LayoutPage
	// LayoutPopup is an HTML fragment for a popup host page to embed: one
	// container div holding its font links, a <style> element whose rules
	// all apply inside the container only, and the rows as in
	// LayoutPage. The popup's frame (position, size, overlay) is the
	// host's, as with the vendor's popup exports.
	LayoutPopup
)

// String names the layout as the content service's collections do.
func (l Layout) String() string {
	switch l {
	case LayoutEmail:
		return "email"
	case LayoutPage:
		return "page"
	case LayoutPopup:
		return "popup"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

func (l Layout) valid() bool { return l >= LayoutEmail && l <= LayoutPopup }

// ParseLayout reads a layout's name ("email", "page" or "popup").
func ParseLayout(s string) (Layout, error) {
	for l := LayoutEmail; l.valid(); l++ {
		if s == l.String() {
			return l, nil
		}
	}
	return LayoutEmail, fmt.Errorf("unknown layout %q: want email, page or popup", s)
}
