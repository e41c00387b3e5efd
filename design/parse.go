package design

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// parser is a small JSON parser that builds an order-preserving Value
// tree. It exists (instead of encoding/json into any) so that decoding can
// keep unknown members in order for a faithful round trip, and enforce
// depth and count limits before allocating.
//
// It makes two passes. shapeOf first counts the children of every
// container; then the parse cuts each container's members or items from
// one exactly sized array for the document as it opens the container,
// and parses every value straight into its final place: a document costs
// one large allocation, and no value is copied after it is parsed.
type parser struct {
	src    string // the document: strings and numbers are substrings of it, so they cost no allocation
	pos    int
	depth  int
	values int
	lim    Limits

	shape      []int32  // children of each container, in the order they open
	containers int      // how many of shape the parse has used
	members    []Member // of objects and arrays alike
	strBuf     []byte   // scratch for unescaping strings
	// raw: keep rawKey members as Raw values (see Raw); off when a
	// parse must be redone without it (errNotRaw).
	raw bool
	// raws are the Raw values shapeOf checked, in document order; the
	// parse steps over them.
	raws    []rawSpan
	rawNext int
	// known are the strings shapeOf has read, in document order: the
	// parse takes them without scanning them again. Plain ones (no escape,
	// control character or invalid UTF-8) are substrings of src; escaped
	// ones shapeOf unescaped into arena, all of a document's into one
	// buffer that becomes one string, where unescaping each in the parse
	// would scan it a second time and allocate it on its own.
	known     []knownString
	knownNext int
	arenaBuf  []byte            // escaped strings' text, unescaped, as shapeOf builds it
	arena     string            // arenaBuf once shapeOf is done
	openBuf   [16]openContainer // tree's stack
}

// knownString is a string shapeOf read: its text in src is [start, end)
// (end is the closing quote); unescaped, it is arena[a0:a1], or src's
// text itself when a0 < 0.
type knownString struct{ start, end, a0, a1 int32 }

// rawSpan is a Raw value's place in src; end < 0 when it failed its check
// (the parse checks it again in document order, to report the first
// error of the document).
type rawSpan struct{ start, end int }

// rawKey is the member name, as written in the document, whose array
// value is kept as Raw.
const rawKey = `"widgets"`

// errNotRaw reports a raw candidate that cannot be kept as written (it
// holds invalid UTF-8, which decoding replaces): the document is parsed
// again with every value decoded.
var errNotRaw = errors.New("raw value holds invalid UTF-8")

type syntaxError struct {
	msg    string
	offset int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.offset) }

type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

func (p *parser) fail(msg string) error { return &syntaxError{msg: msg, offset: p.pos} }

func (p *parser) skipSpace() {
	// Most calls find no space at all: answer those without a call.
	if p.pos >= len(p.src) || p.src[p.pos] <= ' ' {
		p.skipSpaceRun()
	}
}

// skipSpaceRun is kept out of line so that skipSpace stays small enough
// to inline.
//
//go:noinline
func (p *parser) skipSpaceRun() {
	// A lone space (after a colon, mostly) needs no loop.
	if i := p.pos + 1; i < len(p.src) && p.src[i] > ' ' && p.src[i-1] == ' ' {
		p.pos = i
		return
	}
	p.pos = skipSpace(p.src, p.pos)
}

// skipSpace returns the index of the first non-space byte of s at or
// after i.
func skipSpace(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
		i++
		// Pretty-printed designs are mostly indentation: after a newline,
		// step over the run of tabs or spaces eight bytes at a time.
		if c == '\n' && i < len(s) && (s[i] == '\t' || s[i] == ' ') {
			run := lows * uint64(s[i])
			for i+8 <= len(s) {
				if w := load64(s, i) ^ run; w != 0 {
					i += bits.TrailingZeros64(w) / 8
					break
				}
				i += 8
			}
		}
	}
	return i
}

// load64 reads eight bytes of s at i, little-endian (the compiler merges
// the loads into one).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Word-at-a-time string scanning (the "find a zero byte" tests of
// Hacker's Delight 6-1): each mask has the high bit set in the first byte
// of x that matches, counting from the lowest; bits above the first match
// may be set spuriously, so only the lowest set bit counts.
const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// quoteOrBackslash marks bytes '"' and '\\'.
func quoteOrBackslash(x uint64) uint64 {
	q := x ^ (lows * '"')
	b := x ^ (lows * '\\')
	return ((q-lows)&^q | (b-lows)&^b) & highs
}

// stringStop marks the bytes that end the plain run of a string: a quote,
// a backslash or a control character. Flipping bit 1 moves '"' (0x22) to
// 0x20 and keeps the control characters below it, so one "less than 0x21"
// test finds both.
func stringStop(x uint64) uint64 {
	q := x ^ (lows * 0x02)
	b := x ^ (lows * '\\')
	return ((q-lows*0x21)&^q | (b-lows)&^b) & highs
}

// nextStop returns the index of the first quote, backslash or control
// character of s at or after i, or len(s).
func nextStop(s string, i int) int {
	i, _ = plainRun(s, i)
	return i
}

// plainRun is nextStop that also returns the bytes before the stop OR-ed
// together: non-ASCII if any high bit is set.
func plainRun(s string, i int) (int, uint64) {
	var seen uint64
	for ; i+8 <= len(s); i += 8 {
		x := load64(s, i)
		if m := stringStop(x); m != 0 {
			n := bits.TrailingZeros64(m) >> 3
			return i + n, seen | x&(1<<(8*n)-1)
		}
		seen |= x
	}
	for ; i < len(s) && s[i] != '"' && s[i] != '\\' && s[i] >= 0x20; i++ {
		seen |= uint64(s[i])
	}
	return i, seen
}

// shapeOf counts the children of every container of s, in the order the
// containers open, into shape, and returns the total members (of objects)
// and items (of arrays). It trusts s to be JSON; where it is not, the
// parse that follows finds the error (it never reaches a container or
// a child the count missed: both passes see the same strings, hence the
// same brackets and commas, up to the first syntax error). Limits are
// checked here, before anything is allocated for the document.
func (p *parser) shapeOf(stack []int32) (shape, stackOut []int32, members, items int, err error) {
	s := p.src
	shape = p.shape[:0]
	stack = stack[:0] // open containers: index in shape << 1 | 1 for objects
	close := func() {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if top&1 == 1 {
			members += int(shape[top>>1])
		} else {
			items += int(shape[top>>1])
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			// A lone space (after a colon, mostly) needs no call.
			if i+1 < len(s) && s[i+1] > ' ' {
				continue
			}
			i = skipSpace(s, i) - 1
		case '"':
			j := p.scanString(i)
			if p.raw && s[i:j] == rawKey {
				// This member's array is kept as text: check it here, once,
				// and count nothing inside it.
				if k := rawStart(s, j); k >= 0 {
					if j, err = p.checkRaw(k, len(stack)); err != nil {
						return shape, stack, 0, 0, err
					}
				}
			}
			i = j - 1
		case '{', '[':
			if len(stack) >= p.lim.MaxDepth {
				return shape, stack, 0, 0, &limitError{fmt.Sprintf("nesting deeper than %d", p.lim.MaxDepth)}
			}
			if len(shape) >= p.lim.MaxValues {
				return shape, stack, 0, 0, &limitError{fmt.Sprintf("more than %d JSON values", p.lim.MaxValues)}
			}
			var n int32
			j := skipSpace(s, i+1)
			if j < len(s) && s[j] != '}' && s[j] != ']' {
				n = 1
			}
			kind := int32(0)
			if s[i] == '{' {
				kind = 1
			}
			stack = append(stack, int32(len(shape))<<1|kind)
			shape = append(shape, n)
			i = j - 1
		case ',':
			if len(stack) > 0 {
				top := stack[len(stack)-1] >> 1
				shape[top]++
				if int(shape[top]) > p.lim.MaxItems {
					kind := "an array with more than %d elements"
					if stack[len(stack)-1]&1 == 1 {
						kind = "an object with more than %d members"
					}
					return shape, stack, 0, 0, &limitError{fmt.Sprintf(kind, p.lim.MaxItems)}
				}
			}
		case '}', ']':
			if len(stack) > 0 {
				close()
			}
		}
	}
	for len(stack) > 0 {
		close()
	}
	if members+items >= p.lim.MaxValues {
		return shape, stack, 0, 0, &limitError{fmt.Sprintf("more than %d JSON values", p.lim.MaxValues)}
	}
	return shape, stack, members, items, nil
}

// scanString returns the index just past the string opening at i, as
// skipString does, and notes it in p.known when it is plain, or valid
// and escaped (unescaping it into p.arenaBuf).
func (p *parser) scanString(i int) int {
	s := p.src
	end, high := plainRun(s, i+1)
	if end < len(s) && s[end] == '"' && end <= maxSimplePos &&
		(high&highs == 0 || utf8.ValidString(s[i+1:end])) {
		p.known = append(p.known, knownString{int32(i + 1), int32(end), -1, -1})
		return end + 1
	}
	if end < len(s) && s[end] == '\\' && len(s) <= maxSimplePos && len(p.arenaBuf) <= maxSimplePos-len(s) {
		// Errors and invalid UTF-8 are left to the parse, which reports
		// them (or replaces it) in document order.
		a0 := len(p.arenaBuf)
		buf := append(p.arenaBuf, s[i+1:end]...)
		buf, next, msg, _ := unescape(s, end, buf)
		if msg == "" && utf8.Valid(buf[a0:]) {
			p.arenaBuf = buf
			p.known = append(p.known, knownString{int32(i + 1), int32(next - 1), int32(a0), int32(len(buf))})
			return next
		}
		p.arenaBuf = buf[:a0]
	}
	return skipString(s, end) // from the escape, control byte or quote
}

// maxSimplePos bounds the offsets p.known holds (int32).
const maxSimplePos = 1<<31 - 1

// skipString returns the index just past the string whose text starts at
// i (after its opening quote), or len(s) if it does not end.
func skipString(s string, i int) int {
	for {
		for i+8 <= len(s) {
			m := quoteOrBackslash(load64(s, i))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(s) && s[i] != '"' && s[i] != '\\' {
			i++
		}
		switch {
		case i >= len(s):
			return len(s)
		case s[i] == '"':
			return i + 1
		}
		i += 2 // a backslash and the byte it escapes
	}
}

// rawStart returns the index of the '[' that follows a member name ending
// at i (past optional space and the colon), or -1.
func rawStart(s string, i int) int {
	i = skipSpace(s, i)
	if i >= len(s) || s[i] != ':' {
		return -1
	}
	if i = skipSpace(s, i+1); i >= len(s) || s[i] != '[' {
		return -1
	}
	return i
}

// checkRaw checks the Raw value at k for shapeOf, at nesting depth, and
// returns where shapeOf goes on.
func (p *parser) checkRaw(k, depth int) (int, error) {
	if end, values, ok := p.validRaw(k, depth); ok {
		p.values += values
		p.raws = append(p.raws, rawSpan{k, end})
		return end, nil
	}
	p.pos, p.depth = k, depth
	err := p.check()
	p.depth = 0
	switch {
	case err == errNotRaw:
		return 0, err
	case err != nil:
		p.raws = append(p.raws, rawSpan{k, -1})
		return skipBrackets(p.src, k), nil
	}
	p.raws = append(p.raws, rawSpan{k, p.pos})
	return p.pos, nil
}

// skipRaw steps over the Raw value at p.pos that shapeOf checked.
func (p *parser) skipRaw() error {
	if p.rawNext < len(p.raws) {
		r := p.raws[p.rawNext]
		p.rawNext++
		if r.start == p.pos && r.end >= 0 {
			p.pos = r.end
			return nil
		}
	}
	// Failed its check (or, unreachable, not the one expected): check it
	// again here, which reports its error.
	return p.check()
}

// skipBrackets returns the index just past the bracket that closes the
// one at i, counting brackets outside strings (or len(s)).
func skipBrackets(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			i = skipString(s, i+1) - 1
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// check parses one value as value does, with the same errors and limits,
// but builds nothing: for Raw values. One difference, as a Raw value is
// kept as written: invalid UTF-8 in a string is errNotRaw (decoding would
// replace it).
func (p *parser) check() error {
	if err := p.startValue(); err != nil {
		return err
	}
	var v Value
	switch c := p.src[p.pos]; {
	case c == '{' || c == '[':
		return p.checkContainer(c)
	case c == '"':
		return p.checkString()
	case c == 't':
		return p.literal(&v, "true", Bool, true)
	case c == 'f':
		return p.literal(&v, "false", Bool, false)
	case c == 'n':
		return p.literal(&v, "null", Null, false)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(&v)
	default:
		return p.fail(fmt.Sprintf("invalid character %q", c))
	}
}

func (p *parser) checkContainer(open byte) error {
	if err := p.enter(); err != nil {
		return err
	}
	closer, what := byte(']'), "array"
	if open == '{' {
		closer, what = '}', "object"
	}
	p.pos++
	if p.emptyContainer(closer) {
		return nil
	}
	for n := 1; ; n++ {
		if n > p.lim.MaxItems {
			if open == '{' {
				return &limitError{fmt.Sprintf("an object with more than %d members", p.lim.MaxItems)}
			}
			return &limitError{fmt.Sprintf("an array with more than %d elements", p.lim.MaxItems)}
		}
		p.skipSpace()
		if open == '{' {
			if p.pos >= len(p.src) || p.src[p.pos] != '"' {
				return p.fail("expected a member name")
			}
			if err := p.checkString(); err != nil {
				return err
			}
			p.skipSpace()
			if p.pos >= len(p.src) || p.src[p.pos] != ':' {
				return p.fail("expected ':'")
			}
			p.pos++
			p.skipSpace()
		}
		if err := p.check(); err != nil {
			return err
		}
		if done, err := p.afterElement(closer, what); done || err != nil {
			return err
		}
	}
}

// checkString checks the string at p.pos as str does, without building
// it.
func (p *parser) checkString() error {
	d := p.src
	start := p.pos + 1
	i := start
	var high uint64
	n := 0 // bytes of the string once unescaped, as MaxString counts them
	for {
		var seen uint64
		run := i
		i, seen = plainRun(d, i)
		high |= seen
		if i >= len(d) {
			p.pos = i
			return p.fail("unterminated string")
		}
		switch c := d[i]; {
		case c == '"':
			if n += i - run; n > p.lim.MaxString {
				return &limitError{fmt.Sprintf("a string longer than %d bytes", p.lim.MaxString)}
			}
			if high&highs != 0 && !utf8.ValidString(d[start:i]) {
				return errNotRaw
			}
			p.pos = i + 1
			return nil
		case c < 0x20:
			p.pos = i
			return p.fail("control character in string")
		}
		// A backslash and what it escapes.
		if i+1 >= len(d) {
			p.pos = i
			return p.fail("unexpected end of input in string")
		}
		n += i - run
		switch d[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
			n++
		case 'u':
			r, next, ok := unicodeEscape(d, i+2)
			if !ok {
				p.pos = i + 2
				return p.fail("invalid \\u escape")
			}
			i = next
			n += utf8.RuneLen(r)
		default:
			p.pos = i + 1
			return p.fail("invalid escape")
		}
	}
}

// scratch holds a parser's buffers between documents.
type scratch struct {
	shape, stack []int32
	str, arena   []byte
	known        []knownString
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooled bounds what a pooled buffer may keep, so that one huge
// document does not pin its memory for good.
const maxPooled = 1 << 20

func parseDocument(src string, lim Limits) (Value, error) {
	v, err := parse(src, lim, true)
	if err == errNotRaw {
		v, err = parse(src, lim, false)
	}
	return v, err
}

func parse(src string, lim Limits, raw bool) (Value, error) {
	sc := scratchPool.Get().(*scratch)
	p := &parser{src: src, lim: lim, shape: sc.shape, strBuf: sc.str[:0], known: sc.known[:0], arenaBuf: sc.arena[:0], raw: raw}
	shape, stack, members, items, err := p.shapeOf(sc.stack)
	p.shape, p.pos = shape, 0
	p.arena = string(p.arenaBuf)
	defer func() {
		sc.shape, sc.stack, sc.str, sc.known, sc.arena = p.shape[:0], stack[:0], p.strBuf[:0], p.known[:0], p.arenaBuf[:0]
		if cap(sc.known) > maxPooled/16 {
			sc.known = nil
		}
		if cap(sc.arena) > maxPooled {
			sc.arena = nil
		}
		if cap(sc.shape) > maxPooled/4 {
			sc.shape = nil
		}
		if cap(sc.stack) > maxPooled/4 {
			sc.stack = nil
		}
		if cap(sc.str) > maxPooled {
			sc.str = nil
		}
		scratchPool.Put(sc)
	}()
	if err != nil {
		return Value{}, err
	}
	if n := members + items; n > 0 {
		p.members = make([]Member, 0, n)
	}
	var v Value
	p.skipSpace()
	if err := p.tree(&v); err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return Value{}, p.fail("unexpected data after the top-level value")
	}
	return v, nil
}

// startValue counts a value against MaxValues and checks there is one.
func (p *parser) startValue() error {
	p.values++
	if p.values > p.lim.MaxValues {
		return &limitError{fmt.Sprintf("more than %d JSON values", p.lim.MaxValues)}
	}
	if p.pos >= len(p.src) {
		return p.fail("unexpected end of input")
	}
	return nil
}

func (p *parser) literal(v *Value, word string, k Kind, b bool) error {
	if len(p.src)-p.pos < len(word) || p.src[p.pos:p.pos+len(word)] != word {
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

// emptyContainer steps over the closer when the container just opened
// (p.pos past its opening bracket) has no children.
func (p *parser) emptyContainer(closer byte) bool {
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == closer {
		p.pos++
		p.depth--
		return true
	}
	return false
}

// afterElement reads what follows a container's element: a comma (more
// to come) or the closer (done, the container is left).
func (p *parser) afterElement(closer byte, what string) (done bool, err error) {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return false, p.fail("unexpected end of input in " + what)
	}
	switch p.src[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case closer:
		p.pos++
		p.depth--
		return true, nil
	}
	return false, p.fail("expected ',' or '" + string(closer) + "'")
}

// cut takes the next n members of the document's array for a container.
func (p *parser) cut(n int, malformed string) ([]Member, error) {
	l := len(p.members)
	if n > cap(p.members)-l {
		return nil, p.fail(malformed) // unreachable: see shapeOf
	}
	p.members = p.members[:l+n]
	return p.members[l : l+n : l+n], nil
}

// children returns how many children the container opening at p.pos has
// (counted by shapeOf).
func (p *parser) children() (int, error) {
	if p.containers >= len(p.shape) {
		return 0, p.fail("malformed container") // unreachable: see shapeOf
	}
	n := int(p.shape[p.containers])
	p.containers++
	return n, nil
}

// openContainer is an object or array the parse is inside.
type openContainer struct {
	v *Value // its Members are the children cut for it
	i int    // the child being parsed
}

// tree parses the value at p.pos into v (zero on entry), and everything
// inside it: a recursive descent written as one loop over a stack of open
// containers, so that a value costs no call (and no error return) of its
// own.
func (p *parser) tree(v *Value) error {
	open := p.openBuf[:0] // grows past it only for deep documents
	for {
		// The value v starts at p.pos.
		if err := p.startValue(); err != nil {
			return err
		}
		var err error
		switch c := p.src[p.pos]; c {
		case '{', '[':
			kind, closer, malformed := Object, byte('}'), "malformed object"
			if c == '[' {
				kind, closer, malformed = Array, ']', "malformed array"
			}
			v.Kind = kind
			if err := p.enter(); err != nil {
				return err
			}
			n, err := p.children()
			if err != nil {
				return err
			}
			p.pos++
			if p.emptyContainer(closer) {
				break
			}
			if v.Members, err = p.cut(n, malformed); err != nil {
				return err
			}
			open = append(open, openContainer{v: v})
			next, err := p.child(&open[len(open)-1])
			if err != nil {
				return err
			}
			if next != nil {
				v = next
				continue
			}
		case '"':
			v.Kind = String
			v.Str, err = p.str()
		case 't':
			err = p.literal(v, "true", Bool, true)
		case 'f':
			err = p.literal(v, "false", Bool, false)
		case 'n':
			err = p.literal(v, "null", Null, false)
		default:
			if c == '-' || (c >= '0' && c <= '9') {
				err = p.number(v)
			} else {
				err = p.fail(fmt.Sprintf("invalid character %q", c))
			}
		}
		if err != nil {
			return err
		}
		// After a value: a comma leads to its container's next child, the
		// closer closes the container.
		for v = nil; v == nil; {
			if len(open) == 0 {
				return nil
			}
			top := &open[len(open)-1]
			closer, what := byte(']'), "array"
			if top.v.Kind == Object {
				closer, what = '}', "object"
			}
			done, err := p.afterElement(closer, what)
			if err != nil {
				return err
			}
			if done {
				top.v.Members = top.v.Members[: top.i+1 : top.i+1]
				open = open[:len(open)-1]
				continue
			}
			top.i++
			if v, err = p.child(top); err != nil {
				return err
			}
		}
	}
}

// child reads what comes before the value of c's child c.i: the space,
// and for an object the member name and colon. It returns the value to
// parse next, or nil when the child is complete already (a Raw member).
func (p *parser) child(c *openContainer) (*Value, error) {
	p.skipSpace()
	members := c.v.Members
	if c.v.Kind == Array {
		if c.i >= len(members) {
			return nil, p.fail("malformed array") // unreachable: see shapeOf
		}
		return &members[c.i].Value, nil
	}
	if p.pos >= len(p.src) || p.src[p.pos] != '"' {
		return nil, p.fail("expected a member name")
	}
	if c.i >= len(members) {
		return nil, p.fail("malformed object") // unreachable: see shapeOf
	}
	m := &members[c.i]
	keyStart := p.pos
	key, err := p.str()
	if err != nil {
		return nil, err
	}
	m.Key = key
	raw := p.raw && p.src[keyStart:p.pos] == rawKey
	p.skipSpace()
	if p.pos >= len(p.src) || p.src[p.pos] != ':' {
		return nil, p.fail("expected ':'")
	}
	p.pos++
	p.skipSpace()
	if raw && p.pos < len(p.src) && p.src[p.pos] == '[' {
		start := p.pos
		if err := p.skipRaw(); err != nil {
			return nil, err
		}
		m.Value = Value{Kind: Raw, Str: p.src[start:p.pos]}
		return nil, nil
	}
	return &m.Value, nil
}

func (p *parser) number(v *Value) error {
	end, ok := scanNumber(p.src, p.pos)
	if !ok {
		p.pos = end
		return p.fail("invalid number")
	}
	v.Kind, v.Str = Number, p.src[p.pos:end]
	p.pos = end
	return nil
}

// scanNumber reads the JSON number at i of s: it returns the index past
// it, or false and the index where the grammar fails.
func scanNumber(s string, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i)
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(i + 1); j > i+1 {
			i = j
		} else {
			return i + 1, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if j := digits(i); j > i {
			i = j
		} else {
			return i, false
		}
	}
	return i, true
}

// str parses a JSON string at p.pos (which is '"'). Invalid UTF-8 is
// replaced by U+FFFD, as encoding/json does.
func (p *parser) str() (string, error) {
	// Both passes meet the same strings in the same order; the start is
	// compared anyway, so that a mismatch can only cost a scan.
	for p.knownNext < len(p.known) && int(p.known[p.knownNext].start) <= p.pos {
		p.knownNext++
	}
	if p.knownNext < len(p.known) {
		if ks := p.known[p.knownNext]; int(ks.start) == p.pos+1 {
			p.knownNext++
			p.pos = int(ks.end) + 1
			if ks.a0 < 0 {
				return p.checkStr(p.src[ks.start:ks.end])
			}
			return p.checkStr(p.arena[ks.a0:ks.a1])
		}
	}
	p.pos++ // opening quote
	start := p.pos
	d := p.src
	// Fast path: no escapes, ASCII or valid UTF-8 (checked only when a
	// non-ASCII byte was seen).
	i, high := plainRun(d, start)
	if i < len(d) && d[i] == '"' && (high&highs == 0 || utf8.ValidString(d[start:i])) {
		p.pos = i + 1
		return p.checkStr(d[start:i])
	}
	// Unescaping goes through a scratch buffer reused for every string of
	// the document (and kept with the stacks): only the result is allocated.
	buf, next, msg, at := unescape(d, i, append(p.strBuf[:0], d[start:i]...))
	p.strBuf = buf[:0]
	if msg != "" {
		p.pos = at
		return "", p.fail(msg)
	}
	p.pos = next
	if !utf8.Valid(buf) {
		return p.checkStr(string([]rune(string(buf))))
	}
	return p.checkStr(string(buf))
}

// unescape appends to buf the text of the string in d from i (inside the
// string, after its opening quote) to its closing quote, escapes decoded,
// and returns the index past the quote. On a syntax error it returns the
// message and the offset to report.
func unescape(d string, i int, buf []byte) (out []byte, next int, msg string, at int) {
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			return buf, i + 1, "", 0
		case c < 0x20:
			return buf, i, "control character in string", i
		case c == '\\':
			if i+1 >= len(d) {
				return buf, i, "unexpected end of input in string", i
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
				r, next, ok := unicodeEscape(d, i)
				if !ok {
					return buf, i, "invalid \\u escape", i
				}
				i = next
				buf = utf8.AppendRune(buf, r)
			default:
				return buf, i, "invalid escape", i - 1
			}
		default:
			// Copy the run of plain bytes up to the next quote, escape or
			// control character in one go.
			k := nextStop(d, i+1)
			buf = append(buf, d[i:k]...)
			i = k
		}
	}
	return buf, i, "unterminated string", i
}

func (p *parser) checkStr(s string) (string, error) {
	if len(s) > p.lim.MaxString {
		return "", &limitError{fmt.Sprintf("a string longer than %d bytes", p.lim.MaxString)}
	}
	return s, nil
}

// unicodeEscape decodes the \\u escape whose hex digits start at i (and
// the low surrogate that must follow a high one; a lone surrogate is
// U+FFFD, as in encoding/json), and returns where the escape ends.
func unicodeEscape(d string, i int) (r rune, next int, ok bool) {
	if r, ok = hex4(d, i); !ok {
		return 0, i, false
	}
	i += 4
	if utf16.IsSurrogate(r) {
		r2, ok2 := rune(0), false
		if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
			r2, ok2 = hex4(d, i+2)
		}
		if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
			return dec, i + 6, true
		}
		return utf8.RuneError, i, true
	}
	return r, i, true
}

func hex4(d string, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	n, err := strconv.ParseUint(d[i:i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}
