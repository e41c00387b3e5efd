package design

import (
	"errors"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// Members no renderer reads, which can be most of a document: the legacy
// editor metadata of 0.0.1-era designs ("widgets" arrays, up to half of
// such a document) and the copy of multi-language designs in other
// languages ("translations" objects, five sixths of a design in ten
// languages). The parser checks them like any value (syntax, every
// limit) but keeps each as its JSON text, a Value of kind Raw, which
// Encode writes back compacted and Expand decodes for a reader that
// wants it (the Check API's languages).

// rawMember reports whether the value of the member name, as written,
// that begins with a token of kind is kept as Raw. Names are compared as
// written: "widget\u0073" is not the legacy member.
func rawMember(name string, kind jsontext.Kind) bool {
	switch name {
	case `"widgets"`:
		return kind == '['
	case `"translations"`:
		return kind == '{'
	}
	return false
}

// errNotRaw reports a raw member that cannot be kept as written (it
// holds invalid UTF-8, which decoding replaces): the document is parsed
// again with every value decoded.
var errNotRaw = errors.New("raw value holds invalid UTF-8")

// rawValue reads into v, as a Raw value, the array or object that begins
// with tok: checked for syntax and against every limit as any value, but
// not built.
func (p *parser) rawValue(v *Value, tok jsontext.Token, from int64, depth int) error {
	start := p.dec.InputOffset() - 1 // the '[' or '{' just read
	if err := p.skip(tok, from, depth); err != nil {
		return err
	}
	text := p.src[start:p.dec.InputOffset()]
	if p.anyUTF8 && !utf8.ValidString(text) {
		return errNotRaw
	}
	v.Kind, v.Str = Raw, text
	return nil
}

// Expand returns the value a Raw value's text decodes to, with its raw
// members decoded too, and any other value as it is. The text was
// checked against the limits of the decode that kept it, so it is
// decoded without limits of its own. The tree is not cut from the
// decoder's pooled blocks (Release does not concern it), but from
// blocks of its containers' own sizes: a Check of a design with
// thousands of small translations holds a tree for each.
func (v *Value) Expand() *Value {
	if v == nil || v.Kind != Raw {
		return v
	}
	lim := Limits{MaxDepth: math.MaxInt, MaxValues: math.MaxInt, MaxItems: math.MaxInt, MaxString: math.MaxInt}
	// anyUTF8: the text may hold a lone surrogate's escape, which the
	// decode that kept it accepted.
	// jsontext only reads the bytes (see DecodeStringWithLimits).
	p := newParser(v.Str, unsafe.Slice(unsafe.StringData(v.Str), len(v.Str)), lim, true, false)
	defer p.free()
	p.unpooled = true
	x, err := p.document()
	if err != nil { // only for a Raw value made by hand
		return &absent
	}
	return &x
}
