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
	block   []Member // where keep cuts containers' children from
	buf     []byte   // scratch for unquoting strings with invalid UTF-8
}

// rawKey is the member name, as written in the document, whose array
// value is kept as Raw.
const rawKey = `"widgets"`

type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// parseDocument parses one JSON value into a tree. data holds the same
// bytes as src: jsontext reads data in place, and strings, numbers and
// Raw values are substrings of src.
//
// It reads the document first with jsontext checking that its strings
// are valid UTF-8, which saves checking each string again here: nearly
// every document is. Where that read fails, a second one decides the
// verdict as encoding/json would: invalid UTF-8 and lone surrogates
// decode to U+FFFD.
func parseDocument(src string, data []byte, lim Limits) (Value, error) {
	v, err := parse(src, data, lim, false, true)
	var le *limitError
	if err != nil && !errors.As(err, &le) {
		v, err = parse(src, data, lim, true, true)
	}
	if err == errNotRaw {
		v, err = parse(src, data, lim, true, false)
	}
	return v, err
}

// errNotRaw reports a widgets array that cannot be kept as written (it
// holds invalid UTF-8, which decoding replaces): the document is parsed
// again with every value decoded.
var errNotRaw = errors.New("raw value holds invalid UTF-8")

// parse parses src (and data, its bytes). anyUTF8 accepts invalid UTF-8
// (and lone surrogates); raw keeps widgets arrays as Raw.
func parse(src string, data []byte, lim Limits, anyUTF8, raw bool) (Value, error) {
	// Designs repeat member names (the last one wins, see Get).
	opts := []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(anyUTF8)}
	p := &parser{
		src: src,
		// From a bytes.Buffer jsontext reads in place, without a copy.
		dec:     jsontext.NewDecoder(bytes.NewBuffer(data), opts...),
		lim:     lim,
		anyUTF8: anyUTF8,
		raw:     raw,
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

// value reads the next value into v; depth is the nesting of the
// container it is in.
func (p *parser) value(v *Value, depth int) error {
	p.values++
	if p.values > p.lim.MaxValues {
		return &limitError{fmt.Sprintf("more than %d JSON values", p.lim.MaxValues)}
	}
	switch kind := p.dec.PeekKind(); kind {
	case '{', '[':
		if _, err := p.dec.ReadToken(); err != nil {
			return err
		}
		if depth+1 > p.lim.MaxDepth {
			return &limitError{fmt.Sprintf("nesting deeper than %d", p.lim.MaxDepth)}
		}
		if kind == '{' {
			return p.container(v, Object, '}', depth+1)
		}
		return p.container(v, Array, ']', depth+1)
	}
	raw, err := p.dec.ReadValue()
	if err != nil {
		return err
	}
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
	return err
}

// written returns the text of src that raw, just read, is a copy of.
func (p *parser) written(raw jsontext.Value) string {
	end := int(p.dec.InputOffset())
	return p.src[end-len(raw) : end]
}

// str returns the text of the string raw, just read, within MaxString.
func (p *parser) str(raw jsontext.Value) (string, error) {
	var s string
	switch {
	case bytes.IndexByte(raw, '\\') < 0 && (!p.anyUTF8 || utf8.Valid(raw)):
		s = p.written(raw)
		s = s[1 : len(s)-1]
	case p.anyUTF8:
		// Invalid UTF-8 becomes U+FFFD, as in encoding/json (the error
		// only says it did).
		p.buf, _ = jsontext.AppendUnquote(p.buf[:0], raw)
		s = string(p.buf)
	default:
		s = unescape(raw)
	}
	if len(s) > p.lim.MaxString {
		return "", p.stringTooLong()
	}
	return s, nil
}

func (p *parser) stringTooLong() error {
	return &limitError{fmt.Sprintf("a string longer than %d bytes", p.lim.MaxString)}
}

// container reads into v the members of an object or
// the elements of an array, its opening read, up to closer; depth is its
// own nesting. The children are built in place in an array on the
// goroutine's stack, large enough for most containers (where a shared
// heap stack cost a copy of each, and its growth), before keep copies
// them to their final place.
func (p *parser) container(v *Value, kind Kind, closer jsontext.Kind, depth int) error {
	var small [smallContainer]Member
	children := small[:0]
	for n := 0; p.dec.PeekKind() != closer; n++ {
		if n == p.lim.MaxItems {
			return p.tooManyItems(kind)
		}
		children = append(children, Member{})
		m := &children[len(children)-1]
		var err error
		if kind == Object {
			err = p.member(m, depth)
		} else {
			err = p.value(&m.Value, depth)
		}
		if err != nil {
			return err
		}
	}
	if _, err := p.dec.ReadToken(); err != nil { // the closer, or the error PeekKind met
		return err
	}
	v.Kind = kind
	if len(children) > 0 {
		v.Members = p.keep(children)
	}
	return nil
}

func (p *parser) tooManyItems(kind Kind) error {
	if kind == Object {
		return &limitError{fmt.Sprintf("an object with more than %d members", p.lim.MaxItems)}
	}
	return &limitError{fmt.Sprintf("an array with more than %d elements", p.lim.MaxItems)}
}

// smallContainer is how many children 99 % of the corpus's containers have at most.
const smallContainer = 10

// member reads an object's member into m: its name (a value to
// jsontext, not to MaxValues) and its value, kept as Raw for a widgets
// array.
func (p *parser) member(m *Member, depth int) error {
	name, err := p.dec.ReadValue()
	if err != nil {
		return err
	}
	// Compared as written: "widget\u0073" is not the legacy member.
	raw := p.raw && string(name) == rawKey
	if m.Key, err = p.str(name); err != nil {
		return err
	}
	if raw && p.dec.PeekKind() == '[' {
		return p.rawValue(&m.Value, depth)
	}
	return p.value(&m.Value, depth)
}

// keep copies a container's children to their final place, cut from a
// block shared with the containers around: an allocation per container
// was most of the decoder's allocations (705 for a large legacy design,
// 118 with blocks). A block is sized for what is left of the document,
// at about one member per bytesPerMember bytes of it, so that a small
// document does not get a large block.
func (p *parser) keep(children []Member) []Member {
	if len(children) > cap(p.block)-len(p.block) {
		left := len(p.src) - int(p.dec.InputOffset())
		size := min(max(left/bytesPerMember, minBlock), maxBlock)
		p.block = make([]Member, 0, max(len(children), size))
	}
	i := len(p.block)
	p.block = append(p.block, children...)
	return p.block[i:len(p.block):len(p.block)]
}

// Block sizes, in members. Designs hold one member per 26 to 80 bytes.
const (
	bytesPerMember = 32
	minBlock       = 16
	maxBlock       = 1024
)

// rawValue reads into v the array that follows the member name just
// read as a Raw value: checked for syntax and against every limit as any
// value, but not built.
func (p *parser) rawValue(v *Value, depth int) error {
	start := int(p.dec.InputOffset()) // after the name; then ':' and space
	start += strings.IndexByte(p.src[start:], '[')
	from := p.dec.InputOffset()
	tok, err := p.dec.ReadToken()
	if err != nil {
		return err
	}
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

// skip checks, without building it, the value whose first token tok was
// just read, from offset from on, against every limit as value does.
// Raw values are up to half of a legacy design: reading them token by
// token, rather than with PeekKind and a read per value as value does,
// takes a quarter less time.
func (p *parser) skip(tok jsontext.Token, from int64, depth int) error {
	p.values++
	if p.values > p.lim.MaxValues {
		return &limitError{fmt.Sprintf("more than %d JSON values", p.lim.MaxValues)}
	}
	switch tok.Kind() {
	case '"':
		return p.checkString(tok, from)
	case '{', '[':
		if depth+1 > p.lim.MaxDepth {
			return &limitError{fmt.Sprintf("nesting deeper than %d", p.lim.MaxDepth)}
		}
		kind := Array
		if tok.Kind() == '{' {
			kind = Object
		}
		for n := 0; ; n++ {
			from := p.dec.InputOffset()
			tok, err := p.dec.ReadToken()
			if err != nil {
				return err
			}
			if k := tok.Kind(); k == '}' || k == ']' {
				return nil
			}
			if n == p.lim.MaxItems {
				return p.tooManyItems(kind)
			}
			if kind == Object { // tok is the member's name
				if err := p.checkString(tok, from); err != nil {
					return err
				}
				from = p.dec.InputOffset()
				if tok, err = p.dec.ReadToken(); err != nil {
					return err
				}
			}
			if err := p.skip(tok, from, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkString checks the string token tok, read from offset from on,
// against MaxString. Text decoded from valid UTF-8 is no longer than
// written, and the text read is the string, its quotes and what came
// before it: mostly that is short enough.
func (p *parser) checkString(tok jsontext.Token, from int64) error {
	if !p.anyUTF8 && int(p.dec.InputOffset()-from)-2 <= p.lim.MaxString {
		return nil
	}
	if len(tok.String()) > p.lim.MaxString {
		return p.stringTooLong()
	}
	return nil
}

// unescape returns the text of the JSON string raw. jsontext has
// checked raw (its escapes, surrogate pairs and UTF-8), so this only
// decodes: AppendUnquote checks every rune again, which made a design in
// other alphabets decode and render in 2.1 times the old parser's time
// (1.7 with this). The text is built in place, in one allocation.
func unescape(raw []byte) string {
	raw = raw[1 : len(raw)-1]
	var b strings.Builder
	b.Grow(len(raw)) // decoded text is never longer than written
	for {
		i := bytes.IndexByte(raw, '\\')
		if i < 0 {
			b.Write(raw)
			return b.String()
		}
		b.Write(raw[:i])
		c := raw[i+1]
		raw = raw[i+2:]
		switch c {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := hex4(raw)
			raw = raw[4:]
			if utf16.IsSurrogate(r) { // the high half: "\\u" and the low one follow
				r = utf16.DecodeRune(r, hex4(raw[2:]))
				raw = raw[6:]
			}
			b.WriteRune(r)
		default: // '"', '\\', '/'
			b.WriteByte(c)
		}
	}
}

// hex4 reads the four hex digits at the start of b.
func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(n)
}
