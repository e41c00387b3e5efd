// Package design is the model of the editor's design JSON (the "full JSON"
// format of Beefree-style editors; docs/contracts.md, "Design JSON", describes it).
// It knows nothing of Caddy.
//
// Decode parses a document into an order-preserving Value tree (Design.Root,
// which Encode writes back with every member, known or not) and builds a
// typed view over it: Page → Body, Rows → Columns → Modules. The typed view
// resolves the format's variations once (legacy spellings, numbers vs "px"
// strings, [] for {}, messageWidth as the content width, grid-columns out
// of 12), so renderers need not.
package design

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// Design is a decoded design document.
type Design struct {
	Root Value // the whole document as decoded; Encode writes it back
	Page Page
	Size int // bytes of JSON decoded (renderers size their buffers by it)

	blocks []*[]Member // the memory Root is cut from (see Release)
}

// Release lets a later Decode reuse the memory of the design's document
// tree. Calling it is optional (a server calls it once the design is
// rendered); afterwards neither the design nor anything read from it
// (its Values, Rows, Modules) may be used. Strings read from it stay
// valid: they are the document's text, not the tree's.
func (d *Design) Release() {
	if d == nil {
		return
	}
	releaseBlocks(d.blocks)
	*d = Design{}
}

// Page is the design (the document's "page" member).
type Page struct {
	Title       string
	Description string
	Version     string // page.template.version ("2.0.0", "0.0.1", or "")
	Meta        Meta
	Body        Body
	Rows        []Row
	Raw         *Value
}

// Meta is page.head.meta.
type Meta struct {
	Subject, Preheader, Title, Description, Lang string
}

// Body holds the page-wide settings (page.body).
type Body struct {
	// Width is the content width in pixels, from
	// body.content.computedStyle.messageWidth (authoritative, unlike the
	// often stale row widths); DefaultWidth when missing or unusable.
	Width       int
	WidthMobile int // messageWidthMobile (popups), 0 if absent

	BackgroundColor        string // body.container.style.background-color
	MessageBackgroundColor string // computedStyle.messageBackgroundColor
	Color                  string // default text colour
	FontFamily             string // default font stack
	LinkColor              string
	Direction              string // "rtl" or "ltr"/""
	Align                  string // computedStyle.align

	Container    Style // body.container.style
	ContentStyle Style // body.content.style
	Computed     Style // body.content.computedStyle
	WebFonts     []WebFont
	WebFontsPath string // "page.body.webFonts", or "page.webFonts" when misplaced there
	Raw          *Value
}

// WebFont is one entry of body.webFonts (or the misplaced page.webFonts).
type WebFont struct {
	Name       string // "Montserrat" (legacy "fontName")
	FontFamily string // CSS stack (legacy "family")
	URL        string // stylesheet URL, "" for system fonts
	Index      int    // in the JSON array (junk entries are left out of WebFonts)
}

// Row is one horizontal band.
type Row struct {
	Type           string
	UUID           string
	Name           string
	ContainerStyle Style // full-width band: background colour/image
	ContentStyle   Style // centred content box
	Computed       Style // content.computedStyle
	MobileStyle    Style // content.mobileStyle

	StackOnMobile   bool   // rowColStackOnMobile (default true)
	ReverseOnMobile bool   // rowReverseColStackOnMobile
	HideOnMobile    bool   // hideContentOnMobile
	HideOnDesktop   bool   // hideContentOnDesktop
	VerticalAlign   string // "top", "middle", "bottom" ("" = top)
	ColumnsSpacing  float64
	ColumnsRadius   string

	// DisplayBefore/After wrap the row in template-language text
	// (container.displayCondition).
	DisplayBefore, DisplayAfter string

	Columns []Column
	Raw     *Value
}

// Column is one column of a row.
type Column struct {
	// Grid is the width in twelfths ("grid-columns"), normalised by
	// Decode so that a row's columns are all ≥1; see Row.GridTotal.
	Grid        int
	UUID        string
	Style       Style
	MobileStyle Style
	Modules     []Module
	Raw         *Value
}

// GridTotal is the sum of the row's column grids (12 in a well-formed row;
// renderers divide by it so odd rows still fill the width).
func (r *Row) GridTotal() int {
	t := 0
	for i := range r.Columns {
		t += r.Columns[i].Grid
	}
	return t
}

// Module kinds: the type name without "mailup-bee-newsletter-modules-".
const (
	KindText         = "text"
	KindParagraph    = "paragraph"
	KindHeading      = "heading"
	KindList         = "list"
	KindImage        = "image"
	KindButton       = "button"
	KindDivider      = "divider"
	KindSpacer       = "spacer"
	KindSocial       = "social"
	KindIcons        = "icons"
	KindMenu         = "menu"
	KindHTML         = "html"
	KindVideo        = "video"
	KindTable        = "table"
	KindForm         = "form"
	KindAddon        = "addon"
	KindEmpty        = "empty"
	KindCarousel     = "carousel"
	KindMergeContent = "merge-content"
)

// knownKind reports whether kind is one of the format's module types (the
// vendor's ModuleTypes), whose descriptor has the known envelope.
func knownKind(kind string) bool {
	switch kind {
	case KindText, KindParagraph, KindHeading, KindList, KindImage, KindButton, KindDivider, KindSpacer,
		KindSocial, KindIcons, KindMenu, KindHTML, KindVideo, KindTable, KindForm, KindAddon, KindEmpty,
		KindCarousel, KindMergeContent:
		return true
	}
	return false
}

// TypePrefix starts every module type name.
const TypePrefix = "mailup-bee-newsletter-modules-"

// Module is one content block.
type Module struct {
	Type        string // as written, e.g. "mailup-bee-newsletter-modules-image"
	Kind        string // Type without TypePrefix ("image"); for addons see ContentType
	UUID        string
	Locked      bool
	ContentType string // addon only: the kind the addon's descriptor is shaped like

	Descriptor *Value // never nil; [] normalised to an empty object view
	Style      Style  // descriptor.style (outer box: padding, text-align, width)
	Computed   Style  // descriptor.computedStyle
	Mobile     Style  // descriptor.mobileStyle

	HideOnMobile  bool
	HideOnDesktop bool
	Raw           *Value
}

// EffectiveKind is the kind to render: an addon's ContentType when it has
// one, else Kind.
func (m *Module) EffectiveKind() string {
	if m.Kind == KindAddon && m.ContentType != "" {
		return m.ContentType
	}
	return m.Kind
}

// PathError reports the first problem found in a document that is JSON but
// not a design, with the JSON path where it was found.
type PathError struct {
	Path string // e.g. "page.rows[3].columns[0].modules[2]"
	Msg  string // e.g. "descriptor.image.src must be a string"
}

func (e *PathError) Error() string { return e.Path + ": " + e.Msg }

// ErrNotJSON is returned (wrapped) when the input is not JSON at all.
var ErrNotJSON = errors.New("design: not JSON")

// ErrTooLarge is returned (wrapped) when the input exceeds a bound (size,
// depth, counts).
var ErrTooLarge = errors.New("design: over a limit")

// Limits bound what Decode accepts, so that no input can make it use
// unbounded memory or time.
type Limits struct {
	MaxBytes   int // input size
	MaxDepth   int // nesting of arrays/objects
	MaxValues  int // JSON values in the whole document
	MaxItems   int // elements of one array / members of one object
	MaxString  int // bytes of one string
	MaxRows    int
	MaxColumns int // per row
	MaxModules int // in the whole design
}

// Default limits. Real designs are well under them: the largest public
// design is ~600 KB with depth ~12 and a few hundred modules.
const (
	DefaultMaxBytes   = 8 << 20
	DefaultMaxDepth   = 64
	DefaultMaxValues  = 1 << 20
	DefaultMaxItems   = 100_000
	DefaultMaxString  = 2 << 20
	DefaultMaxRows    = 2_000
	DefaultMaxColumns = 12
	DefaultMaxModules = 20_000
)

// DefaultLimits returns the limits Decode uses.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:   DefaultMaxBytes,
		MaxDepth:   DefaultMaxDepth,
		MaxValues:  DefaultMaxValues,
		MaxItems:   DefaultMaxItems,
		MaxString:  DefaultMaxString,
		MaxRows:    DefaultMaxRows,
		MaxColumns: DefaultMaxColumns,
		MaxModules: DefaultMaxModules,
	}
}

// DefaultWidth is the content width used when messageWidth is missing or
// unusable; MinWidth/MaxWidth clamp a usable one.
const (
	DefaultWidth = 600
	MinWidth     = 100
	MaxWidth     = 2000
)

// Decode parses a design document with DefaultLimits. The design shares
// data's memory (see DecodeWithLimits).
func Decode(data []byte) (*Design, error) { return DecodeWithLimits(data, DefaultLimits()) }

// DecodeWithLimits parses a design document. Errors: wrapping ErrNotJSON
// (not JSON), wrapping ErrTooLarge (over a limit), or a *PathError (JSON but
// not a design). Zero fields of lim take the defaults.
//
// The design shares data's memory: the model's strings written without
// escapes, numbers and Raw values are read from data in place, so data
// must not change while the design (or anything read from it) is in use.
// A copy of the whole document cost as much as a fifth of the bytes a
// render allocated. A caller that recycles its buffer does so once it is
// done with the design, as content_service does.
func DecodeWithLimits(data []byte, lim Limits) (*Design, error) {
	lim = lim.withDefaults()
	if len(data) > lim.MaxBytes {
		return nil, tooLarge(len(data), lim)
	}
	return decode(unsafe.String(unsafe.SliceData(data), len(data)), data, lim)
}

// DecodeString is Decode for a document held as a string.
func DecodeString(src string) (*Design, error) { return DecodeStringWithLimits(src, DefaultLimits()) }

// DecodeStringWithLimits is DecodeWithLimits for a document held as a
// string. The model's strings written without escapes, numbers and Raw
// values are substrings of src, which it keeps. jsontext reads src's own
// bytes, in place and without writing to them (from a bytes.Buffer it
// only takes the bytes), so no copy is made: the copy was 6 % of a
// decode and render, and the most the collector had to clear after one.
// TestDecodeStringReadOnly (and render's TestRenderReadOnlyInput) decode
// from read-only memory, so a write would fault.
func DecodeStringWithLimits(src string, lim Limits) (*Design, error) {
	lim = lim.withDefaults()
	if len(src) > lim.MaxBytes {
		return nil, tooLarge(len(src), lim)
	}
	return decode(src, unsafe.Slice(unsafe.StringData(src), len(src)), lim)
}

func tooLarge(n int, lim Limits) error {
	return fmt.Errorf("%w: %d bytes, more than %d", ErrTooLarge, n, lim.MaxBytes)
}

// decode parses src, whose bytes data holds too (jsontext reads bytes,
// the model keeps substrings of src); lim has its defaults.
func decode(src string, data []byte, lim Limits) (*Design, error) {
	// A UTF-8 byte order mark is common in files saved by editors.
	if bom := "\xEF\xBB\xBF"; strings.HasPrefix(src, bom) {
		src, data = src[len(bom):], data[len(bom):]
	}
	d := &Design{Size: len(src)}
	root, blocks, err := parseDocument(src, data, lim)
	if err != nil {
		var le *limitError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("%w: %s", ErrTooLarge, le.msg)
		}
		return nil, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	d.Root, d.blocks = root, blocks
	b := builder{lim: lim}
	if err := b.page(&d.Page, &d.Root); err != nil {
		d.Release()
		return nil, err
	}
	return d, nil
}

func (l Limits) withDefaults() Limits {
	def := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = def.MaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = def.MaxDepth
	}
	if l.MaxValues <= 0 {
		l.MaxValues = def.MaxValues
	}
	if l.MaxItems <= 0 {
		l.MaxItems = def.MaxItems
	}
	if l.MaxString <= 0 {
		l.MaxString = def.MaxString
	}
	if l.MaxRows <= 0 {
		l.MaxRows = def.MaxRows
	}
	if l.MaxColumns <= 0 {
		l.MaxColumns = def.MaxColumns
	}
	if l.MaxModules <= 0 {
		l.MaxModules = def.MaxModules
	}
	return l
}
