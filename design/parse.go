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
	tok, err := p.dec.ReadToken()
	if err == nil {
		err = p.value(&v, tok, 0, 0)
	}
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

// The parser reads the document token by token: over a design, a loop of
// ReadToken takes about 0.7 of the time of one of PeekKind and ReadValue.
// A value is read from its first token, tok, read from offset from on
// (see written).

// value reads into v the value that begins with tok; depth is the
// nesting of the container it is in.
func (p *parser) value(v *Value, tok jsontext.Token, from int64, depth int) error {
	p.values++
	if p.values > p.lim.MaxValues {
		return &limitError{fmt.Sprintf("more than %d JSON values", p.lim.MaxValues)}
	}
	switch kind := tok.Kind(); kind {
	case '{', '[':
		if depth+1 > p.lim.MaxDepth {
			return &limitError{fmt.Sprintf("nesting deeper than %d", p.lim.MaxDepth)}
		}
		return p.container(v, kind, depth+1)
	case '"':
		var err error
		v.Kind = String
		v.Str, err = p.str(p.written(from))
		return err
	case 'n':
		v.Kind = Null
	case 't', 'f':
		v.Kind, v.Bool = Bool, kind == 't'
	default:
		v.Kind, v.Str = Number, p.written(from) // the literal as written
	}
	return nil
}

// written returns the text of src of the string or number just read,
// from offset from on: only white space and a comma or colon come before
// it.
func (p *parser) written(from int64) string {
	text := p.src[from:p.dec.InputOffset()]
	if text[len(text)-1] == '"' {
		return text[strings.IndexByte(text, '"'):]
	}
	return text[strings.LastIndexAny(text, " \t\r\n,:")+1:]
}

// str returns the text of the string raw, as written, within MaxString.
func (p *parser) str(raw string) (string, error) {
	var s string
	switch {
	case strings.IndexByte(raw, '\\') < 0 && (!p.anyUTF8 || utf8.ValidString(raw)):
		s = raw[1 : len(raw)-1]
	case p.anyUTF8:
		// Invalid UTF-8 becomes U+FFFD, as in encoding/json (the error
		// only says it did).
		p.buf, _ = jsontext.AppendUnquote(p.buf[:0], raw)
		s = string(p.buf)
	default:
		s = unescape(raw)
	}
	if len(s) > p.lim.MaxString {
		return "", &limitError{fmt.Sprintf("a string longer than %d bytes", p.lim.MaxString)}
	}
	return s, nil
}

// container reads into v the members of an object or the elements of an
// array, its opening open read, up to its closer; depth is its own
// nesting. The children are built in place in an array on the
// goroutine's stack, large enough for most containers (where a shared
// heap stack cost a copy of each, and its growth), before keep copies
// them to their final place.
func (p *parser) container(v *Value, open jsontext.Kind, depth int) error {
	v.Kind = Array
	if open == '{' {
		v.Kind = Object
	}
	var small [smallContainer]Member
	children := small[:0]
	for n := 0; ; n++ {
		from := p.dec.InputOffset()
		tok, err := p.dec.ReadToken()
		if err != nil {
			return err
		}
		if k := tok.Kind(); k == '}' || k == ']' {
			break
		}
		if n == p.lim.MaxItems {
			return p.tooManyItems(v.Kind)
		}
		children = append(children, Member{})
		m := &children[len(children)-1]
		if v.Kind == Object { // tok is the member's name
			err = p.member(m, p.written(from), depth)
		} else {
			err = p.value(&m.Value, tok, from, depth)
		}
		if err != nil {
			return err
		}
	}
	if len(children) > 0 {
		v.Members = p.keep(children)
	}
	return nil
}

// smallContainer is how many children 99 % of the corpus's containers have at most.
const smallContainer = 10

func (p *parser) tooManyItems(kind Kind) error {
	if kind == Object {
		return &limitError{fmt.Sprintf("an object with more than %d members", p.lim.MaxItems)}
	}
	return &limitError{fmt.Sprintf("an array with more than %d elements", p.lim.MaxItems)}
}

// member reads into m the member whose name, as written, was just read:
// the name (a value to jsontext, not to MaxValues) and its value, kept as
// Raw for a widgets array.
func (p *parser) member(m *Member, name string, depth int) error {
	var err error
	if m.Key, err = p.str(name); err != nil {
		return err
	}
	from := p.dec.InputOffset()
	tok, err := p.dec.ReadToken()
	if err != nil {
		return err
	}
	// Compared as written: "widget\u0073" is not the legacy member.
	if p.raw && name == rawKey && tok.Kind() == '[' {
		return p.rawValue(&m.Value, tok, from, depth)
	}
	return p.value(&m.Value, tok, from, depth)
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

// rawValue reads into v, as a Raw value, the array that begins with tok:
// checked for syntax and against every limit as any value, but not built.
func (p *parser) rawValue(v *Value, tok jsontext.Token, from int64, depth int) error {
	start := p.dec.InputOffset() - 1 // the '[' just read
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

// skip checks the value that begins with tok against every limit as value
// does, without building it.
func (p *parser) skip(tok jsontext.Token, from int64, depth int) error {
	p.values++
	if p.values > p.lim.MaxValues {
		return &limitError{fmt.Sprintf("more than %d JSON values", p.lim.MaxValues)}
	}
	switch tok.Kind() {
	case '"':
		return p.checkString(p.written(from))
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
				if err := p.checkString(p.written(from)); err != nil {
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

// checkString checks the string raw, as written, against MaxString
// without keeping it: text decoded from valid UTF-8 is never longer than
// written.
func (p *parser) checkString(raw string) error {
	if !p.anyUTF8 && len(raw)-2 <= p.lim.MaxString {
		return nil
	}
	_, err := p.str(raw)
	return err
}

// unescape returns the text of the JSON string raw. jsontext has
// checked raw (its escapes, surrogate pairs and UTF-8), so this only
// decodes: AppendUnquote checks every rune again, which made a design in
// other alphabets decode and render in 2.1 times the old parser's time
// (1.7 with this). The text is built in place, in one allocation.
func unescape(raw string) string {
	raw = raw[1 : len(raw)-1]
	var b strings.Builder
	b.Grow(len(raw)) // decoded text is never longer than written
	for {
		i := strings.IndexByte(raw, '\\')
		if i < 0 {
			b.WriteString(raw)
			return b.String()
		}
		b.WriteString(raw[:i])
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

// hex4 reads the four hex digits at the start of s.
func hex4(s string) rune {
	n, _ := strconv.ParseUint(s[:4], 16, 16)
	return rune(n)
}
