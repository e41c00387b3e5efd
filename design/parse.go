package design

import (
	"fmt"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// parser is a small JSON parser that builds an order-preserving Value
// tree. It exists (instead of encoding/json into any) so that decoding can
// keep unknown members in order for a faithful round trip, and enforce
// depth and count limits while parsing rather than after allocating.
type parser struct {
	data   []byte
	src    string // data as one string: unescaped strings and numbers are substrings of it, so they cost no allocation
	pos    int
	depth  int
	values int
	lim    Limits

	// Members and items are parsed onto these stacks (nested containers
	// push above their parent's entries), then moved into an exactly sized
	// slice cut from a shared slab, so that a document costs a few large
	// allocations instead of one growing slice per object and array.
	memberStack []Member
	itemStack   []Value
	memberSlab  []Member
	itemSlab    []Value
	strBuf      []byte // scratch for unescaping strings
}

// A fresh slab holds twice as many elements as the one before, from
// slabFirst up to slabMax (more when one container alone needs more): small
// documents waste little, large ones take few allocations.
const (
	slabFirst = 32
	slabMax   = 256
)

func nextSlab(prev int) int { return min(max(2*prev, slabFirst), slabMax) }

func (p *parser) takeMembers(start int) []Member {
	n := len(p.memberStack) - start
	if cap(p.memberSlab)-len(p.memberSlab) < n {
		p.memberSlab = make([]Member, 0, max(n, nextSlab(cap(p.memberSlab))))
	}
	l := len(p.memberSlab)
	p.memberSlab = append(p.memberSlab, p.memberStack[start:]...)
	p.memberStack = p.memberStack[:start]
	return p.memberSlab[l : l+n : l+n]
}

func (p *parser) takeItems(start int) []Value {
	n := len(p.itemStack) - start
	if cap(p.itemSlab)-len(p.itemSlab) < n {
		p.itemSlab = make([]Value, 0, max(n, nextSlab(cap(p.itemSlab))))
	}
	l := len(p.itemSlab)
	p.itemSlab = append(p.itemSlab, p.itemStack[start:]...)
	p.itemStack = p.itemStack[:start]
	return p.itemSlab[l : l+n : l+n]
}

type syntaxError struct {
	msg    string
	offset int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.offset) }

type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

func (p *parser) fail(msg string) error { return &syntaxError{msg: msg, offset: p.pos} }

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// scratch holds a parser's stacks between documents: they end every
// parse empty (their contents moved to the slabs), so reusing them saves
// regrowing them per request.
type scratch struct {
	members []Member
	items   []Value
	str     []byte
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooledStack bounds what a pooled stack may keep, so that one huge
// document does not pin its stacks' memory for good.
const maxPooledStack = 1 << 14

// maxPooledString bounds the pooled unescaping buffer the same way.
const maxPooledString = 1 << 20

func parseDocument(data []byte, lim Limits) (Value, error) {
	sc := scratchPool.Get().(*scratch)
	p := &parser{data: data, src: string(data), lim: lim, memberStack: sc.members[:0], itemStack: sc.items[:0], strBuf: sc.str[:0]}
	defer func() {
		// The stacks' backing arrays still hold copies of entries moved to
		// the slabs (clearing them on every move costs write barriers);
		// clear them once here so the pool keeps no pointers into this
		// document.
		clear(p.memberStack[:cap(p.memberStack)])
		clear(p.itemStack[:cap(p.itemStack)])
		sc.members, sc.items, sc.str = p.memberStack[:0], p.itemStack[:0], p.strBuf[:0]
		if cap(sc.members) > maxPooledStack {
			sc.members = nil
		}
		if cap(sc.items) > maxPooledStack {
			sc.items = nil
		}
		if cap(sc.str) > maxPooledString {
			sc.str = nil
		}
		scratchPool.Put(sc)
	}()
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return Value{}, p.fail("unexpected data after the top-level value")
	}
	return v, nil
}

// value parses one value. It returns the Value rather than filling a
// pointer: in this recursion a pointer parameter would make every
// caller's Value escape to the heap.
func (p *parser) value() (Value, error) {
	var v Value
	p.values++
	if p.values > p.lim.MaxValues {
		return v, &limitError{fmt.Sprintf("more than %d JSON values", p.lim.MaxValues)}
	}
	if p.pos >= len(p.data) {
		return v, p.fail("unexpected end of input")
	}
	var err error
	switch c := p.data[p.pos]; c {
	case '{':
		v.Kind = Object
		v.Members, err = p.object()
	case '[':
		v.Kind = Array
		v.Items, err = p.array()
	case '"':
		v.Kind = String
		v.Str, err = p.str()
	case 't':
		err = p.literal(&v, "true", Bool, true)
	case 'f':
		err = p.literal(&v, "false", Bool, false)
	case 'n':
		err = p.literal(&v, "null", Null, false)
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			err = p.number(&v)
		} else {
			err = p.fail(fmt.Sprintf("invalid character %q", c))
		}
	}
	return v, err
}

func (p *parser) literal(v *Value, word string, k Kind, b bool) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.fail("invalid literal")
	}
	p.pos += len(word)
	v.Kind, v.Bool = k, b
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > p.lim.MaxDepth {
		return &limitError{fmt.Sprintf("nesting deeper than %d", p.lim.MaxDepth)}
	}
	return nil
}

func (p *parser) object() ([]Member, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return nil, nil
	}
	start := len(p.memberStack)
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail("expected a member name")
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.pos++
		p.skipSpace()
		if len(p.memberStack)-start >= p.lim.MaxItems {
			return nil, &limitError{fmt.Sprintf("an object with more than %d members", p.lim.MaxItems)}
		}
		// The member's value is parsed before it goes on the stack:
		// nested containers grow the stack and would move it.
		mv, err := p.value()
		if err != nil {
			return nil, err
		}
		p.memberStack = append(p.memberStack, Member{Key: key, Value: mv})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail("unexpected end of input in object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			return p.takeMembers(start), nil
		default:
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

func (p *parser) array() ([]Value, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return nil, nil
	}
	start := len(p.itemStack)
	for {
		p.skipSpace()
		if len(p.itemStack)-start >= p.lim.MaxItems {
			return nil, &limitError{fmt.Sprintf("an array with more than %d elements", p.lim.MaxItems)}
		}
		item, err := p.value()
		if err != nil {
			return nil, err
		}
		p.itemStack = append(p.itemStack, item)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail("unexpected end of input in array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.depth--
			return p.takeItems(start), nil
		default:
			return nil, p.fail("expected ',' or ']'")
		}
	}
}

func (p *parser) number(v *Value) error {
	start := p.pos
	d := p.data
	i := p.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		p.pos = i
		return p.fail("invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return p.fail("invalid number")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return p.fail("invalid number")
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	p.pos = i
	v.Kind, v.Str = Number, p.src[start:i]
	return nil
}

// str parses a JSON string at p.pos (which is '"'). Invalid UTF-8 is
// replaced by U+FFFD, as encoding/json does.
func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	d := p.data
	// Fast path: no escapes, ASCII or valid UTF-8 (checked only when a
	// non-ASCII byte was seen).
	i := start
	var high byte
	for i < len(d) {
		c := d[i]
		if c == '"' {
			if high < utf8.RuneSelf || utf8.Valid(d[start:i]) {
				p.pos = i + 1
				return p.checkStr(p.src[start:i])
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
		high |= c
		i++
	}
	// Unescaping goes through a scratch buffer reused for every string of
	// the document (and kept with the stacks): only the result is allocated.
	buf := append(p.strBuf[:0], d[start:i]...)
	defer func() { p.strBuf = buf[:0] }()
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			p.pos = i + 1
			if !utf8.Valid(buf) {
				buf = []byte(string([]rune(string(buf))))
			}
			return p.checkStr(string(buf))
		case c < 0x20:
			p.pos = i
			return "", p.fail("control character in string")
		case c == '\\':
			if i+1 >= len(d) {
				p.pos = i
				return "", p.fail("unexpected end of input in string")
			}
			e := d[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
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
				r, ok := hex4(d, i)
				if !ok {
					p.pos = i
					return "", p.fail("invalid \\u escape")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(0), false
					if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
						r2, ok2 = hex4(d, i+2)
					}
					if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				buf = utf8.AppendRune(buf, r)
			default:
				p.pos = i - 1
				return "", p.fail("invalid escape")
			}
		default:
			buf = append(buf, c)
			i++
		}
	}
	p.pos = i
	return "", p.fail("unterminated string")
}

func (p *parser) checkStr(s string) (string, error) {
	if len(s) > p.lim.MaxString {
		return "", &limitError{fmt.Sprintf("a string longer than %d bytes", p.lim.MaxString)}
	}
	return s, nil
}

func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(d[i:i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}
