package design

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf16"
)

// What keeps the decoder's allocations and copies few: containers'
// children cut from shared blocks, and strings with escapes decoded in
// one allocation.

// keep copies a container's children to their final place, cut from a
// block shared with the containers around: an allocation per container
// was most of the decoder's allocations (705 for a large legacy design,
// 118 with blocks). A block is sized for the members the document has
// left (p.members), so that a document gets about one block (up to
// maxBlock members each) and no more room than it uses.
func (p *parser) keep(children []Member) []Member {
	if len(children) > cap(p.block)-len(p.block) {
		size := min(max(p.members, minBlock), maxBlock)
		p.block = make([]Member, 0, max(len(children), size))
	}
	p.members -= len(children)
	i := len(p.block)
	p.block = append(p.block, children...)
	return p.block[i:len(p.block):len(p.block)]
}

// Block sizes, in members.
const (
	minBlock = 16
	maxBlock = 1024
)

// memberCount is at least the number of members and elements of the
// document data: each but a container's first follows a comma, the first
// its '{' or '['. Commas and brackets inside strings only add to it: the
// count is exact for most designs, where sizing blocks by the document's
// length left up to 2.4 times the room needed (white space, long text).
func memberCount(data []byte) int {
	return bytes.Count(data, []byte{','}) + bytes.Count(data, []byte{'{'}) + bytes.Count(data, []byte{'['})
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
