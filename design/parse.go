package design

import (
	"bytes"
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
	src    string       // the document: strings, numbers and Raw values are substrings of it where they can be
	in     bytes.Buffer // the document's bytes, which dec reads in place
	dec    *jsontext.Decoder
	lim    Limits
	values int // values read so far, against MaxValues
	// anyUTF8: jsontext accepts invalid UTF-8, so the parse must look for it.
	anyUTF8 bool
	// keepRaw keeps the values of some members as Raw: checked but
	// not built (see raw.go).
	keepRaw bool
	block   []Member    // where keep cuts containers' children from (see parsemem.go)
	blocks  []*[]Member // the pooled blocks the tree is cut from, block last
	// unpooled gives each container a block of its own size, not from
	// the pool: for a tree that is never released (Expand).
	unpooled bool
	buf      []byte // scratch for unquoting strings with invalid UTF-8
	// spares are the buffers of containers larger than smallContainer,
	// free for the next such container (see grow).
	spares [][]Member
}

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
//
// The tree is cut from blocks, returned with it, to give back with
// releaseBlocks once the tree is no longer used.
func parseDocument(src string, data []byte, lim Limits) (Value, []*[]Member, error) {
	v, blocks, err := parse(src, data, lim, false, true)
	var le *limitError
	if err != nil && !errors.As(err, &le) {
		v, blocks, err = parse(src, data, lim, true, true)
	}
	if err == errNotRaw {
		v, blocks, err = parse(src, data, lim, true, false)
	}
	return v, blocks, err
}

// parse parses src (and data, its bytes). anyUTF8 accepts invalid UTF-8
// (and lone surrogates); keepRaw keeps the members of rawMember as Raw.
// It returns the tree and the blocks it is cut from; a parse that fails
// gives its blocks back itself.
func parse(src string, data []byte, lim Limits, anyUTF8, keepRaw bool) (Value, []*[]Member, error) {
	p := newParser(src, data, lim, anyUTF8, keepRaw)
	defer p.free()
	v, err := p.document()
	if err != nil {
		releaseBlocks(p.blocks)
		return Value{}, nil, err
	}
	return v, p.blocks, nil
}

// newParser returns a parser of parserPool set to read src, to give back
// with free once the parse is done.
func newParser(src string, data []byte, lim Limits, anyUTF8, keepRaw bool) *parser {
	p := parserPool.Get().(*parser)
	p.src, p.lim, p.anyUTF8, p.keepRaw = src, lim, anyUTF8, keepRaw
	// From a bytes.Buffer jsontext reads in place, without a copy.
	p.in = *bytes.NewBuffer(data)
	// Designs repeat member names (the last one wins, see Get).
	p.dec.Reset(&p.in, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(anyUTF8))
	return p
}

// document reads the one value of the document and its end.
func (p *parser) document() (Value, error) {
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
	if err := p.count(); err != nil {
		return err
	}
	switch kind := tok.Kind(); kind {
	case '{', '[':
		if err := p.nest(depth); err != nil {
			return err
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
		return "", limitf("a string longer than %d bytes", p.lim.MaxString)
	}
	return s, nil
}

// container reads into v the members of an object or the elements of an
// array, its opening open read, up to its closer; depth is its own
// nesting. The children are built in place in an array on the
// goroutine's stack, large enough for most containers (where a shared
// heap stack cost a copy of each, and its growth), or in one of the
// parser's spare buffers for a larger container (see grow), before keep
// copies them to their final place.
func (p *parser) container(v *Value, open jsontext.Kind, depth int) error {
	v.Kind = Array
	if open == '{' {
		v.Kind = Object
	}
	var small [smallContainer]Member
	children := small[:0]
	var spare []Member // children, once they outgrow small
	for n := 0; ; n++ {
		from := p.dec.InputOffset()
		tok, err := p.dec.ReadToken()
		if err != nil {
			return err
		}
		if k := tok.Kind(); k == '}' || k == ']' {
			break
		}
		if err := p.item(n, v.Kind); err != nil {
			return err
		}
		if len(children) == cap(children) {
			spare = p.grow(children)
			children = spare
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
	if spare != nil {
		p.spares = append(p.spares, spare[:0])
	}
	return nil
}

// grow returns children, full, in a buffer with room for more: a spare
// one of the parser's, taken until the container is read, for a
// container outgrowing its array on the stack. Growing that array on the
// heap instead (append) allocated two or three buffers per large
// container, each dropped once its children were kept: 4 KB of garbage
// per decode of a 20 KB design, half of what Decode allocated.
func (p *parser) grow(children []Member) []Member {
	if cap(children) == smallContainer {
		if n := len(p.spares); n > 0 {
			spare := p.spares[n-1]
			p.spares = p.spares[:n-1]
			return append(spare, children...)
		}
	}
	return append(make([]Member, 0, 2*cap(children)), children...)
}

// smallContainer is how many children 99 % of the corpus's containers have at most.
const smallContainer = 10

// The limits are checked here, for values built and values only checked
// (skip) alike, strings aside (str).

// count counts one more value against MaxValues. It, nest and item are
// small enough to inline: they run for every value.
func (p *parser) count() error {
	if p.values++; p.values <= p.lim.MaxValues {
		return nil
	}
	return limitf("more than %d JSON values", p.lim.MaxValues)
}

// nest checks a container in one at depth against MaxDepth.
func (p *parser) nest(depth int) error {
	if depth < p.lim.MaxDepth {
		return nil
	}
	return limitf("nesting deeper than %d", p.lim.MaxDepth)
}

// limitf is the limitError of a limit n; kept out of line so that the
// checks stay small enough to inline.
//
//go:noinline
func limitf(format string, n int) error { return &limitError{fmt.Sprintf(format, n)} }

// item checks that a container of kind has room for its child n
// (counted from 0) under MaxItems.
func (p *parser) item(n int, kind Kind) error {
	if n < p.lim.MaxItems {
		return nil
	}
	return p.tooManyItems(kind)
}

func (p *parser) tooManyItems(kind Kind) error {
	if kind == Object {
		return limitf("an object with more than %d members", p.lim.MaxItems)
	}
	return limitf("an array with more than %d elements", p.lim.MaxItems)
}

// member reads into m the member whose name, as written, was just read:
// the name (a value to jsontext, not to MaxValues) and its value, kept as
// Raw for a member of rawMember.
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
	if p.keepRaw && rawMember(name, tok.Kind()) {
		return p.rawValue(&m.Value, tok, from, depth)
	}
	return p.value(&m.Value, tok, from, depth)
}

// skip checks the value that begins with tok against every limit as value
// does, without building it.
func (p *parser) skip(tok jsontext.Token, from int64, depth int) error {
	if err := p.count(); err != nil {
		return err
	}
	switch tok.Kind() {
	case '"':
		return p.checkString(p.written(from))
	case '{', '[':
		if err := p.nest(depth); err != nil {
			return err
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
			if err := p.item(n, kind); err != nil {
				return err
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
