package design

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// parser builds an order-preserving Value tree from jsontext's tokens.
// It exists (instead of encoding/json into any) so that decoding keeps
// unknown members in order for a faithful round trip, and enforces
// Limits as it reads, before a value is built.
type parser struct {
	src    string // the document, for Raw values' text
	dec    *jsontext.Decoder
	lim    Limits
	values int  // values read so far, against MaxValues
	raw    bool // keep widgets arrays as Raw (see rawKey)
}

// rawKey is the member name, as written in the document, whose array
// value is kept as Raw.
const rawKey = `"widgets"`

type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// jsonOptions make jsontext accept what encoding/json accepts: designs
// repeat member names (the last one wins, see Get) and hold invalid UTF-8
// and lone surrogates, which decode to U+FFFD.
var jsonOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// errNotRaw reports a widgets array that cannot be kept as written (it
// holds invalid UTF-8, which decoding replaces): the document is parsed
// again with every value decoded.
var errNotRaw = errors.New("raw value holds invalid UTF-8")

// parseDocument parses src, one JSON value, into a tree; Raw values are
// substrings of src.
func parseDocument(src string, lim Limits) (Value, error) {
	v, err := parse(src, lim, true)
	if err == errNotRaw {
		v, err = parse(src, lim, false)
	}
	return v, err
}

// parse parses src; raw says whether widgets arrays are kept as Raw.
func parse(src string, lim Limits, raw bool) (Value, error) {
	p := &parser{
		src: src,
		dec: jsontext.NewDecoder(strings.NewReader(src), jsonOptions...),
		lim: lim,
		raw: raw,
	}
	var v Value
	if err := p.value(&v, 0); err != nil {
		if err == io.EOF {
			return Value{}, errors.New("unexpected end of input")
		}
		return Value{}, err
	}
	switch _, err := p.dec.ReadToken(); err {
	case io.EOF:
		return v, nil
	case nil:
		return Value{}, fmt.Errorf("unexpected data after the top-level value at offset %d", p.dec.InputOffset())
	default:
		return Value{}, err
	}
}

// value reads the next value into v, or only checks it when v is nil;
// depth is the nesting of the container it is in.
func (p *parser) value(v *Value, depth int) error {
	p.values++
	if p.values > p.lim.MaxValues {
		return &limitError{fmt.Sprintf("more than %d JSON values", p.lim.MaxValues)}
	}
	tok, err := p.dec.ReadToken()
	if err != nil {
		return err
	}
	switch kind := tok.Kind(); kind {
	case '{', '[':
		if depth+1 > p.lim.MaxDepth {
			return &limitError{fmt.Sprintf("nesting deeper than %d", p.lim.MaxDepth)}
		}
		if kind == '{' {
			return p.object(v, depth+1)
		}
		return p.array(v, depth+1)
	case '"':
		if v == nil {
			// len of the conversion costs no allocation.
			return p.checkLen(len(tok.String()))
		}
		v.Kind, v.Str = String, tok.String()
		return p.checkLen(len(v.Str))
	}
	if v == nil {
		return nil
	}
	switch tok.Kind() {
	case 'n':
		v.Kind = Null
	case 't', 'f':
		v.Kind, v.Bool = Bool, tok.Bool()
	case '0':
		v.Kind, v.Str = Number, tok.String() // the literal as written
	}
	return nil
}

// checkLen checks the length of a string, unescaped, against MaxString.
func (p *parser) checkLen(n int) error {
	if n > p.lim.MaxString {
		return &limitError{fmt.Sprintf("a string longer than %d bytes", p.lim.MaxString)}
	}
	return nil
}

// object reads an object's members (its '{' read) into v, or only checks
// them when v is nil; depth is the object's own nesting.
func (p *parser) object(v *Value, depth int) error {
	if v != nil {
		v.Kind = Object
	}
	for n := 0; p.dec.PeekKind() != '}'; n++ {
		if n == p.lim.MaxItems {
			return &limitError{fmt.Sprintf("an object with more than %d members", p.lim.MaxItems)}
		}
		// The name: a value to jsontext, not to MaxValues.
		tok, err := p.dec.ReadToken()
		if err != nil {
			return err
		}
		if v == nil {
			if err := p.checkLen(len(tok.String())); err != nil {
				return err
			}
			if err := p.value(nil, depth); err != nil {
				return err
			}
			continue
		}
		v.Members = append(v.Members, Member{Key: tok.String()})
		m := &v.Members[len(v.Members)-1]
		if err := p.checkLen(len(m.Key)); err != nil {
			return err
		}
		if p.raw && m.Key == "widgets" && p.nameWrittenAs(rawKey) && p.dec.PeekKind() == '[' {
			err = p.rawValue(&m.Value, depth)
		} else {
			err = p.value(&m.Value, depth)
		}
		if err != nil {
			return err
		}
	}
	_, err := p.dec.ReadToken() // the '}', or the error PeekKind met
	return err
}

// array reads an array's elements (its '[' read) into v, or only checks
// them when v is nil; depth is the array's own nesting.
func (p *parser) array(v *Value, depth int) error {
	if v != nil {
		v.Kind = Array
	}
	for n := 0; p.dec.PeekKind() != ']'; n++ {
		if n == p.lim.MaxItems {
			return &limitError{fmt.Sprintf("an array with more than %d elements", p.lim.MaxItems)}
		}
		var elem *Value
		if v != nil {
			v.Members = append(v.Members, Member{})
			elem = &v.Members[len(v.Members)-1].Value
		}
		if err := p.value(elem, depth); err != nil {
			return err
		}
	}
	_, err := p.dec.ReadToken()
	return err
}

// nameWrittenAs reports whether the member name just read, whose text is
// name's unquoted, is written as name: "widget\u0073" is not the legacy
// member. (Were the quote that starts name an escaped one, the text would
// hold a quote.)
func (p *parser) nameWrittenAs(name string) bool {
	end := int(p.dec.InputOffset())
	return p.src[end-len(name):end] == name
}

// rawValue reads the array that follows the member name just read as a
// Raw value: checked for syntax and against every limit as any value, but
// not built.
func (p *parser) rawValue(v *Value, depth int) error {
	start := int(p.dec.InputOffset()) // after the name, then ':' and space
	start += strings.IndexByte(p.src[start:], '[')
	if err := p.value(nil, depth); err != nil {
		return err
	}
	text := p.src[start:p.dec.InputOffset()]
	if !utf8.ValidString(text) {
		return errNotRaw
	}
	*v = Value{Kind: Raw, Str: text}
	return nil
}
