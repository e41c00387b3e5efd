package design

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// parser builds an order-preserving Value tree from jsontext's tokens.
// It exists (instead of encoding/json into any) so that decoding keeps
// unknown members in order for a faithful round trip, and enforces
// Limits as it reads, before a value is built.
type parser struct {
	src    string // the document: strings, numbers and Raw values are substrings of it where they can be
	dec    *jsontext.Decoder
	lim    Limits
	values int // values read so far, against MaxValues
	// anyUTF8: jsontext accepts invalid UTF-8, so the parse must look for it.
	anyUTF8 bool
	raw     bool     // keep widgets arrays as Raw (see rawKey)
	stack   []Member // children of the open containers
	block   []Member // where keep cuts containers' children from
	buf     []byte   // scratch for unescaping strings
}

// rawKey is the member name, as written in the document, whose array
// value is kept as Raw.
const rawKey = `"widgets"`

type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// parseDocument parses src, one JSON value, into a tree; Raw values are
// substrings of src.
//
// It reads the document first with jsontext checking that its strings
// are valid UTF-8, which saves checking each string again here: nearly
// every document is. Where that read fails, a second one decides the
// verdict as encoding/json would: invalid UTF-8 and lone surrogates
// decode to U+FFFD.
func parseDocument(src string, lim Limits) (Value, error) {
	v, err := parse(src, lim, false, true)
	var le *limitError
	if err != nil && !errors.As(err, &le) {
		v, err = parse(src, lim, true, true)
	}
	if err == errNotRaw {
		v, err = parse(src, lim, true, false)
	}
	return v, err
}

// errNotRaw reports a widgets array that cannot be kept as written (it
// holds invalid UTF-8, which decoding replaces): the document is parsed
// again with every value decoded.
var errNotRaw = errors.New("raw value holds invalid UTF-8")

// parse parses src. anyUTF8 accepts invalid UTF-8 (and lone surrogates);
// raw keeps widgets arrays as Raw.
func parse(src string, lim Limits, anyUTF8, raw bool) (Value, error) {
	// Designs repeat member names (the last one wins, see Get).
	opts := []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(anyUTF8)}
	p := &parser{
		src: src,
		// From a bytes.Buffer jsontext reads in place: one copy of src, where
		// a reader's would grow its buffer copy by copy.
		dec:     jsontext.NewDecoder(bytes.NewBuffer([]byte(src)), opts...),
		lim:     lim,
		anyUTF8: anyUTF8,
		raw:     raw,
	}
	v, err := p.value(0, true)
	if err != nil {
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

// value reads the next value, or with build false only checks it (for
// Raw values) and returns a zero Value; depth is the nesting of the
// container it is in.
func (p *parser) value(depth int, build bool) (Value, error) {
	p.values++
	if p.values > p.lim.MaxValues {
		return Value{}, &limitError{fmt.Sprintf("more than %d JSON values", p.lim.MaxValues)}
	}
	switch kind := p.dec.PeekKind(); kind {
	case '{', '[':
		if _, err := p.dec.ReadToken(); err != nil {
			return Value{}, err
		}
		if depth+1 > p.lim.MaxDepth {
			return Value{}, &limitError{fmt.Sprintf("nesting deeper than %d", p.lim.MaxDepth)}
		}
		if kind == '{' {
			return p.container(Object, '}', depth+1, build)
		}
		return p.container(Array, ']', depth+1, build)
	}
	raw, err := p.dec.ReadValue()
	if err != nil {
		return Value{}, err
	}
	var v Value
	switch raw[0] {
	case '"':
		v.Kind = String
		v.Str, err = p.str(raw)
	case 'n':
		v.Kind = Null
	case 't', 'f':
		v.Kind, v.Bool = Bool, raw[0] == 't'
	default:
		v.Kind, v.Str = Number, p.written(raw) // the literal as written
	}
	if !build {
		return Value{}, err
	}
	return v, err
}

// written returns the text of src that raw, just read, is a copy of.
func (p *parser) written(raw jsontext.Value) string {
	end := int(p.dec.InputOffset())
	return p.src[end-len(raw) : end]
}

// str returns the text of the string raw, just read, within MaxString.
func (p *parser) str(raw jsontext.Value) (string, error) {
	var s string
	if bytes.IndexByte(raw, '\\') < 0 && (!p.anyUTF8 || utf8.Valid(raw)) {
		s = p.written(raw)
		s = s[1 : len(s)-1]
	} else {
		if p.anyUTF8 {
			// Invalid UTF-8 becomes U+FFFD, as in encoding/json (the
			// error only says it did).
			p.buf, _ = jsontext.AppendUnquote(p.buf[:0], raw)
		} else {
			p.buf = unescape(p.buf[:0], raw)
		}
		s = string(p.buf)
	}
	if len(s) > p.lim.MaxString {
		return "", &limitError{fmt.Sprintf("a string longer than %d bytes", p.lim.MaxString)}
	}
	return s, nil
}

// container reads the members of an object or the elements of an array,
// its opening read, up to closer; depth is its own nesting. The children
// collect on p.stack until the closer, so that each container gets an
// exactly sized slice.
func (p *parser) container(kind Kind, closer jsontext.Kind, depth int, build bool) (Value, error) {
	base := len(p.stack)
	for n := 0; p.dec.PeekKind() != closer; n++ {
		if n == p.lim.MaxItems {
			if kind == Object {
				return Value{}, &limitError{fmt.Sprintf("an object with more than %d members", p.lim.MaxItems)}
			}
			return Value{}, &limitError{fmt.Sprintf("an array with more than %d elements", p.lim.MaxItems)}
		}
		var m Member
		var err error
		if kind == Object {
			m.Key, m.Value, err = p.member(depth, build)
		} else {
			m.Value, err = p.value(depth, build)
		}
		if err != nil {
			return Value{}, err
		}
		if build {
			p.stack = append(p.stack, m)
		}
	}
	if _, err := p.dec.ReadToken(); err != nil { // the closer, or the error PeekKind met
		return Value{}, err
	}
	v := Value{Kind: kind}
	if len(p.stack) > base {
		v.Members = p.keep(p.stack[base:])
		p.stack = p.stack[:base]
	}
	return v, nil
}

// member reads an object's member: its name (a value to jsontext, not to
// MaxValues) and its value, kept as Raw for a widgets array.
func (p *parser) member(depth int, build bool) (string, Value, error) {
	name, err := p.dec.ReadValue()
	if err != nil {
		return "", Value{}, err
	}
	// Compared as written: "widget\u0073" is not the legacy member.
	raw := build && p.raw && string(name) == rawKey
	key, err := p.str(name)
	if err != nil {
		return "", Value{}, err
	}
	var v Value
	if raw && p.dec.PeekKind() == '[' {
		v, err = p.rawValue(depth)
	} else {
		v, err = p.value(depth, build)
	}
	return key, v, err
}

// keep copies a container's children to their final place, cut from a
// block shared with the containers around: an allocation per container
// was most of the decoder's allocations (705 for a large legacy design,
// 118 with blocks).
func (p *parser) keep(children []Member) []Member {
	if len(children) > cap(p.block)-len(p.block) {
		p.block = make([]Member, 0, max(len(children), membersPerBlock))
	}
	i := len(p.block)
	p.block = append(p.block, children...)
	return p.block[i:len(p.block):len(p.block)]
}

// membersPerBlock is the size of the blocks keep cuts from.
const membersPerBlock = 256

// rawValue reads the array that follows the member name just read as a
// Raw value: checked for syntax and against every limit as any value, but
// not built.
func (p *parser) rawValue(depth int) (Value, error) {
	start := int(p.dec.InputOffset()) // after the name; then ':' and space
	start += strings.IndexByte(p.src[start:], '[')
	if _, err := p.value(depth, false); err != nil {
		return Value{}, err
	}
	text := p.src[start:p.dec.InputOffset()]
	if p.anyUTF8 && !utf8.ValidString(text) {
		return Value{}, errNotRaw
	}
	return Value{Kind: Raw, Str: text}, nil
}

// unescape appends the text of the JSON string raw to buf. jsontext has
// checked raw (its escapes, surrogate pairs and UTF-8), so this only
// decodes: AppendUnquote checks every rune again, which made a design in
// other alphabets decode and render in 2.1 times the old parser's time
// (1.7 with this).
func unescape(buf, raw []byte) []byte {
	raw = raw[1 : len(raw)-1]
	for {
		i := bytes.IndexByte(raw, '\\')
		if i < 0 {
			return append(buf, raw...)
		}
		buf = append(buf, raw[:i]...)
		c := raw[i+1]
		raw = raw[i+2:]
		switch c {
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r := hex4(raw)
			raw = raw[4:]
			if utf16.IsSurrogate(r) { // the high half: "\\u" and the low one follow
				r = utf16.DecodeRune(r, hex4(raw[2:]))
				raw = raw[6:]
			}
			buf = utf8.AppendRune(buf, r)
		default: // '"', '\\', '/'
			buf = append(buf, c)
		}
	}
}

// hex4 reads the four hex digits at the start of b.
func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(n)
}
