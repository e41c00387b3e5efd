package design

import (
	"fmt"
	"strconv"
	"strings"
)

// The typed view (Page → Body, Rows → Columns → Modules) is built by
// builder over the decoded Value tree, resolving the format's variations
// once and checking the counts of Limits.

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
		if !isObjectOrAbsent(v) { // the path is built only for the error
			return objectOrEmpty(v, "page.body."+part, part)
		}
		for _, sub := range [...]string{"style", "computedStyle"} {
			if v := v.Get(sub); !isObjectOrAbsent(v) {
				return objectOrEmpty(v, "page.body."+part+"."+sub, sub)
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
	bd.WebFontsPath = "page.body.webFonts"
	if !fonts.Present() {
		fonts = pv.Get("webFonts") // HTML-importer output puts them here
		bd.WebFontsPath = "page.webFonts"
	}
	if fonts.Present() && fonts.Kind != Array {
		return perr(bd.WebFontsPath, "must be an array, not %s", fonts.Kind)
	}
	if n := fonts.Len(); n > 0 {
		bd.WebFonts = make([]WebFont, 0, n)
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
			Index:      i,
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

// objectOrEmptyValue is v when objectOrEmpty accepts it, else an empty
// object (for the members of an unknown module, which are not checked).
func objectOrEmptyValue(v *Value) *Value {
	if isObjectOrAbsent(v) {
		return v
	}
	return &emptyObject
}

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
	// A module of an unknown type is rendered as nothing, with a
	// warning, and is never a failure (the export contract): its
	// descriptor, whose shape the format does not say, is not checked,
	// and what of it is not an object reads as empty.
	d := v.Get("descriptor")
	if knownKind(m.Kind) {
		if err := objectOrEmptyAt(d, at, ".descriptor", "descriptor"); err != nil {
			return err
		}
		for _, sub := range [...]struct{ key, name string }{
			{"style", "descriptor.style"}, {"computedStyle", "descriptor.computedStyle"}, {"mobileStyle", "descriptor.mobileStyle"},
		} {
			if err := objectOrEmptyAt(d.Get(sub.key), at, "", sub.name); err != nil {
				return err
			}
		}
	}
	if d.Kind != Object {
		d = &emptyObject
	}
	m.Descriptor = d
	m.Style = StyleOf(objectOrEmptyValue(d.Get("style")))
	m.Computed = StyleOf(objectOrEmptyValue(d.Get("computedStyle")))
	m.Mobile = StyleOf(objectOrEmptyValue(d.Get("mobileStyle")))
	m.HideOnMobile = m.Computed.V.Get("hideContentOnMobile").Truthy()
	m.HideOnDesktop = m.Computed.V.Get("hideContentOnDesktop").Truthy()
	return nil
}
