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
	"strconv"
	"strings"
)

// Design is a decoded design document.
type Design struct {
	Root Value // the whole document as decoded; Encode writes it back
	Page Page
	Size int // bytes of JSON decoded (renderers size their buffers by it)
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
	Raw          *Value
}

// WebFont is one entry of body.webFonts (or the misplaced page.webFonts).
type WebFont struct {
	Name       string // "Montserrat" (legacy "fontName")
	FontFamily string // CSS stack (legacy "family")
	URL        string // stylesheet URL, "" for system fonts
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

// Decode parses a design document with DefaultLimits.
func Decode(data []byte) (*Design, error) { return DecodeWithLimits(data, DefaultLimits()) }

// DecodeWithLimits parses a design document. Errors: wrapping ErrNotJSON
// (not JSON), wrapping ErrTooLarge (over a limit), or a *PathError (JSON but
// not a design). Zero fields of lim take the defaults.
//
// The model's strings written without escapes, numbers and Raw values are
// substrings of one copy of data; jsontext reads data itself.
func DecodeWithLimits(data []byte, lim Limits) (*Design, error) {
	lim = lim.withDefaults()
	if len(data) > lim.MaxBytes {
		return nil, tooLarge(len(data), lim)
	}
	return decode(string(data), data, lim)
}

// DecodeString is Decode for a document held as a string.
func DecodeString(src string) (*Design, error) { return DecodeStringWithLimits(src, DefaultLimits()) }

// DecodeStringWithLimits is DecodeWithLimits for a document held as a
// string. The model's strings written without escapes, numbers and Raw
// values are substrings of src, which it keeps; jsontext reads a copy of
// its bytes, dropped after decoding.
func DecodeStringWithLimits(src string, lim Limits) (*Design, error) {
	lim = lim.withDefaults()
	if len(src) > lim.MaxBytes {
		return nil, tooLarge(len(src), lim)
	}
	return decode(src, []byte(src), lim)
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
	root, err := parseDocument(src, data, lim)
	if err != nil {
		var le *limitError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("%w: %s", ErrTooLarge, le.msg)
		}
		return nil, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	d.Root = root
	b := builder{lim: lim}
	if err := b.page(&d.Page, &d.Root); err != nil {
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

type builder struct {
	lim     Limits
	modules int
}

func perr(path, format string, args ...any) *PathError {
	return &PathError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// objectOrEmpty checks that v is absent, null, an object, or [] (written
// for {}), naming the path otherwise.
func objectOrEmpty(v *Value, path, name string) error {
	if isObjectOrAbsent(v) {
		return nil
	}
	return perr(path, "%s must be an object, not %s", name, v.Kind)
}

// isObjectOrAbsent is objectOrEmpty's test.
func isObjectOrAbsent(v *Value) bool { return !v.Present() || v.IsObjectLike() }

// where locates a row, column or module; its path string is built only
// when an error names it (building paths for every module cost several
// allocations per module). col and mod are -1 above their level.
type where struct{ row, col, mod int }

func (w where) String() string {
	s := "page.rows[" + strconv.Itoa(w.row) + "]"
	if w.col >= 0 {
		s += ".columns[" + strconv.Itoa(w.col) + "]"
	}
	if w.mod >= 0 {
		s += ".modules[" + strconv.Itoa(w.mod) + "]"
	}
	return s
}

// objectOrEmptyAt is objectOrEmpty at at's path followed by suffix.
func objectOrEmptyAt(v *Value, at where, suffix, name string) error {
	if isObjectOrAbsent(v) {
		return nil
	}
	return perr(at.String()+suffix, "%s must be an object, not %s", name, v.Kind)
}

func (b *builder) page(p *Page, root *Value) error {
	if root.Kind != Object {
		return perr("$", "a design is a JSON object with a \"page\" member, not %s", root.Kind)
	}
	pv := root.Get("page")
	if !pv.Present() {
		return perr("$", "missing \"page\"")
	}
	if pv.Kind != Object {
		return perr("page", "must be an object, not %s", pv.Kind)
	}
	p.Raw = pv
	p.Title = pv.Get("title").Text()
	p.Description = pv.Get("description").Text()
	if err := objectOrEmpty(pv.Get("template"), "page.template", "template"); err != nil {
		return err
	}
	p.Version = pv.At("template", "version").Text()
	head := pv.Get("head")
	if err := objectOrEmpty(head, "page.head", "head"); err != nil {
		return err
	}
	meta := head.Get("meta")
	if err := objectOrEmpty(meta, "page.head.meta", "meta"); err != nil {
		return err
	}
	p.Meta = Meta{
		Subject:     meta.Get("subject").Text(),
		Preheader:   meta.Get("preheader").Text(),
		Title:       meta.Get("title").Text(),
		Description: meta.Get("description").Text(),
		Lang:        strings.TrimSpace(meta.Get("lang").Text()),
	}
	if err := b.body(&p.Body, pv); err != nil {
		return err
	}
	rows := pv.Get("rows")
	switch {
	case !rows.Present():
		return perr("page", "missing \"rows\"")
	case rows.Kind != Array:
		return perr("page.rows", "must be an array, not %s", rows.Kind)
	case len(rows.Members) > b.lim.MaxRows:
		return fmt.Errorf("%w: %d rows, more than %d", ErrTooLarge, len(rows.Members), b.lim.MaxRows)
	}
	p.Rows = make([]Row, len(rows.Members))
	for i := range rows.Members {
		if err := b.row(&p.Rows[i], &rows.Members[i].Value, where{row: i, col: -1, mod: -1}); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) body(bd *Body, pv *Value) error {
	bv := pv.Get("body")
	if err := objectOrEmpty(bv, "page.body", "body"); err != nil {
		return err
	}
	bd.Raw = bv
	for _, part := range [...]string{"container", "content"} {
		v := bv.Get(part)
		if err := objectOrEmpty(v, "page.body."+part, part); err != nil {
			return err
		}
		for _, sub := range [...]string{"style", "computedStyle"} {
			if err := objectOrEmpty(v.Get(sub), "page.body."+part+"."+sub, sub); err != nil {
				return err
			}
		}
	}
	bd.Container = StyleOf(bv.At("container", "style"))
	bd.ContentStyle = StyleOf(bv.At("content", "style"))
	bd.Computed = StyleOf(bv.At("content", "computedStyle"))

	bd.Width = DefaultWidth
	if w, ok := bd.Computed.Px("messageWidth"); ok && w >= 1 {
		bd.Width = clampInt(int(w+0.5), MinWidth, MaxWidth)
	} else if w, ok := bd.ContentStyle.Px("width"); ok && w >= 1 {
		bd.Width = clampInt(int(w+0.5), MinWidth, MaxWidth)
	}
	if w, ok := bd.Computed.Px("messageWidthMobile"); ok && w >= 1 {
		bd.WidthMobile = clampInt(int(w+0.5), 1, MaxWidth)
	}
	bd.BackgroundColor = bd.Container.Get("background-color")
	bd.MessageBackgroundColor = bd.Computed.Get("messageBackgroundColor")
	bd.Color = bd.ContentStyle.Get("color")
	bd.FontFamily = bd.ContentStyle.Get("font-family")
	bd.LinkColor = StyleOf(bd.Computed.V).Get("linkColor")
	bd.Direction = strings.ToLower(bd.ContentStyle.Get("direction"))
	bd.Align = bd.Computed.Get("align")

	fonts := bv.Get("webFonts")
	if !fonts.Present() {
		fonts = pv.Get("webFonts") // HTML-importer output puts them here
	}
	if fonts.Present() && fonts.Kind != Array {
		return perr("page.body.webFonts", "must be an array, not %s", fonts.Kind)
	}
	for i := range fonts.Len() {
		f := fonts.Index(i)
		if f.Kind != Object {
			continue // tolerate junk entries: fonts are cosmetic
		}
		wf := WebFont{
			Name:       f.GetAny("name", "fontName").Text(),
			FontFamily: f.GetAny("fontFamily", "family").Text(),
			URL:        strings.TrimSpace(f.Get("url").Text()),
		}
		if wf.Name == "" && wf.FontFamily == "" {
			continue
		}
		bd.WebFonts = append(bd.WebFonts, wf)
	}
	return nil
}

func clampInt(n, lo, hi int) int {
	if n < lo {
		return lo
	}
	if n > hi {
		return hi
	}
	return n
}

func (b *builder) row(r *Row, v *Value, at where) error {
	if v.Kind != Object {
		return perr(at.String(), "a row must be an object, not %s", v.Kind)
	}
	r.Raw = v
	r.Type = v.Get("type").Text()
	r.UUID = v.Get("uuid").Text()
	r.Name = v.Get("name").Text()
	container, content := v.Get("container"), v.Get("content")
	if err := objectOrEmptyAt(container, at, ".container", "container"); err != nil {
		return err
	}
	if err := objectOrEmptyAt(content, at, ".content", "content"); err != nil {
		return err
	}
	for _, sub := range [...]string{"style", "computedStyle", "mobileStyle"} {
		if v := content.Get(sub); !isObjectOrAbsent(v) { // the path only for an error
			return objectOrEmptyAt(v, at, ".content."+sub, sub)
		}
	}
	if err := objectOrEmptyAt(container.Get("style"), at, ".container.style", "style"); err != nil {
		return err
	}
	r.ContainerStyle = StyleOf(container.Get("style"))
	r.ContentStyle = StyleOf(content.Get("style"))
	r.Computed = StyleOf(content.Get("computedStyle"))
	r.MobileStyle = StyleOf(content.Get("mobileStyle"))
	cs := r.Computed.V
	r.StackOnMobile = cs.Get("rowColStackOnMobile").BoolOr(true)
	r.ReverseOnMobile = cs.Get("rowReverseColStackOnMobile").BoolOr(false)
	r.HideOnMobile = cs.Get("hideContentOnMobile").BoolOr(false)
	r.HideOnDesktop = cs.Get("hideContentOnDesktop").BoolOr(false)
	r.VerticalAlign = strings.ToLower(strings.TrimSpace(cs.GetAny("verticalAlign", "vertical-align").Text()))
	if n, ok := cs.Get("columnsSpacing").Px(); ok && n > 0 && n < 200 {
		r.ColumnsSpacing = n
	}
	r.ColumnsRadius = strings.TrimSpace(cs.Get("columnsBorderRadius").Text())
	if dc := container.Get("displayCondition"); dc.Kind == Object {
		r.DisplayBefore = dc.Get("before").Text()
		r.DisplayAfter = dc.Get("after").Text()
	}

	cols := v.Get("columns")
	switch {
	case !cols.Present():
		return perr(at.String(), "missing \"columns\"")
	case cols.Kind != Array:
		return perr(at.String()+".columns", "must be an array, not %s", cols.Kind)
	case len(cols.Members) > b.lim.MaxColumns:
		return fmt.Errorf("%w: %s has %d columns, more than %d", ErrTooLarge, at, len(cols.Members), b.lim.MaxColumns)
	}
	r.Columns = make([]Column, len(cols.Members))
	for i := range cols.Members {
		if err := b.column(&r.Columns[i], &cols.Members[i].Value, where{row: at.row, col: i, mod: -1}); err != nil {
			return err
		}
	}
	normaliseGrid(r.Columns)
	return nil
}

// normaliseGrid fills in missing or unusable grid-columns: a lone column
// gets 12; otherwise a column without a usable width gets an equal share
// of what the others leave (at least 1).
func normaliseGrid(cols []Column) {
	if len(cols) == 0 {
		return
	}
	used, missing := 0, 0
	for i := range cols {
		if cols[i].Grid > 0 {
			used += cols[i].Grid
		} else {
			missing++
		}
	}
	if missing == 0 {
		return
	}
	share := 1
	if left := 12 - used; left > missing {
		share = left / missing
	}
	for i := range cols {
		if cols[i].Grid <= 0 {
			cols[i].Grid = share
		}
	}
}

func (b *builder) column(c *Column, v *Value, at where) error {
	if v.Kind != Object {
		return perr(at.String(), "a column must be an object, not %s", v.Kind)
	}
	c.Raw = v
	c.UUID = v.Get("uuid").Text()
	g := v.Get("grid-columns")
	if g.Present() {
		n, unit, ok := g.Number()
		if !ok || unit != "" {
			return perr(at.String(), "grid-columns must be a number, not %s", g.Kind)
		}
		if n >= 1 && n <= 12 {
			c.Grid = int(n + 0.5)
		}
	}
	if err := objectOrEmptyAt(v.Get("style"), at, ".style", "style"); err != nil {
		return err
	}
	if err := objectOrEmptyAt(v.Get("mobileStyle"), at, ".mobileStyle", "mobileStyle"); err != nil {
		return err
	}
	c.Style = StyleOf(v.Get("style"))
	c.MobileStyle = StyleOf(v.Get("mobileStyle"))
	mods := v.Get("modules")
	switch {
	case !mods.Present():
		return nil // a column without modules is an empty column
	case mods.Kind != Array:
		return perr(at.String()+".modules", "must be an array, not %s", mods.Kind)
	}
	b.modules += len(mods.Members)
	if b.modules > b.lim.MaxModules {
		return fmt.Errorf("%w: more than %d modules", ErrTooLarge, b.lim.MaxModules)
	}
	c.Modules = make([]Module, len(mods.Members))
	for i := range mods.Members {
		if err := b.module(&c.Modules[i], &mods.Members[i].Value, where{row: at.row, col: at.col, mod: i}); err != nil {
			return err
		}
	}
	return nil
}

var emptyObject = Value{Kind: Object}

func (b *builder) module(m *Module, v *Value, at where) error {
	if v.Kind != Object {
		return perr(at.String(), "a module must be an object, not %s", v.Kind)
	}
	m.Raw = v
	t := v.Get("type")
	if t.Kind != String {
		if !t.Present() {
			return perr(at.String(), "missing module \"type\"")
		}
		return perr(at.String(), "type must be a string, not %s", t.Kind)
	}
	m.Type = strings.TrimSpace(t.Str)
	m.Kind = strings.TrimPrefix(m.Type, TypePrefix)
	m.UUID = v.Get("uuid").Text()
	m.Locked = v.Get("locked").Truthy()
	m.ContentType = strings.TrimPrefix(strings.TrimSpace(v.Get("contentType").Text()), TypePrefix)
	d := v.Get("descriptor")
	if err := objectOrEmptyAt(d, at, ".descriptor", "descriptor"); err != nil {
		return err
	}
	if d.Kind != Object {
		d = &emptyObject
	}
	m.Descriptor = d
	for _, sub := range [...]struct{ key, name string }{
		{"style", "descriptor.style"}, {"computedStyle", "descriptor.computedStyle"}, {"mobileStyle", "descriptor.mobileStyle"},
	} {
		if err := objectOrEmptyAt(d.Get(sub.key), at, "", sub.name); err != nil {
			return err
		}
	}
	m.Style = StyleOf(d.Get("style"))
	m.Computed = StyleOf(d.Get("computedStyle"))
	m.Mobile = StyleOf(d.Get("mobileStyle"))
	m.HideOnMobile = m.Computed.V.Get("hideContentOnMobile").Truthy()
	m.HideOnDesktop = m.Computed.V.Get("hideContentOnDesktop").Truthy()
	return nil
}
