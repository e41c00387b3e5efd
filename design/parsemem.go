package design

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/go-json-experiment/json/jsontext"
)

// What keeps the decoder's allocations and copies few: containers'
// children cut from shared blocks, and strings with escapes decoded in
// one allocation.

// keep copies a container's children to their final place, cut from a
// block shared with the containers around: an allocation per container
// was most of the decoder's allocations (705 for a large legacy design,
// 118 with blocks). Blocks come from blockPool and go back to it when the
// design is released (Design.Release): a server that releases each design
// once answered allocates no tree at all in the steady state, where the
// tree was two thirds of the bytes a decode and render allocated, and the
// collector ran that much more often.
func (p *parser) keep(children []Member) []Member {
	if len(children) > cap(p.block)-len(p.block) {
		p.newBlock(len(children))
	}
	i := len(p.block)
	p.block = append(p.block, children...)
	*p.blocks[len(p.blocks)-1] = p.block // what release clears
	return p.block[i:len(p.block):len(p.block)]
}

// newBlock starts a block with room for n members: a pooled one, or for
// a container larger than a pooled block or an unpooled parse, one of
// its own (kept out of the pool so that the pool's blocks stay one size).
func (p *parser) newBlock(n int) {
	var bp *[]Member
	if !p.unpooled {
		if bp = blockPool.Get().(*[]Member); n > cap(*bp) {
			blockPool.Put(bp)
			bp = nil
		}
	}
	if bp == nil {
		b := make([]Member, 0, n)
		bp = &b
	}
	p.blocks = append(p.blocks, bp)
	p.block = (*bp)[:0]
}

// parserPool holds parsers between decodes, each with its jsontext
// decoder (whose state, stacks included, Reset keeps) and its spare
// buffers: a decode of a small design spent about 1 KB of its
// allocations on a new decoder and the growth of its stacks.
var parserPool = sync.Pool{New: func() any {
	p := new(parser)
	p.dec = jsontext.NewDecoder(&p.in)
	return p
}}

// free gives p back to parserPool, holding on to no document: the tree's
// blocks are the caller's, the spare buffers are cleared, and those of
// containers larger than a block are dropped.
func (p *parser) free() {
	spares := p.spares[:0]
	for _, spare := range p.spares {
		if cap(spare) <= blockSize {
			clear(spare[:cap(spare)])
			spares = append(spares, spare[:0])
		}
	}
	clear(p.spares[len(spares):])
	p.in = bytes.Buffer{}
	p.dec.Reset(&p.in)
	*p = parser{dec: p.dec, buf: p.buf[:0], spares: spares}
	parserPool.Put(p)
}

// blockSize is the members of a pooled block (64 KiB): a typical 40 KB
// design takes two.
const blockSize = 1024

var blockPool = sync.Pool{New: func() any { b := make([]Member, 0, blockSize); return &b }}

// releaseBlocks gives the blocks of a tree back to blockPool, emptied so
// that a pooled block holds on to no document. Under the race detector
// their members are overwritten instead (see poisonReleased).
func releaseBlocks(blocks []*[]Member) {
	for _, bp := range blocks {
		if cap(*bp) != blockSize {
			continue
		}
		if poisonReleased {
			for i := range *bp {
				(*bp)[i] = released
			}
		} else {
			clear(*bp)
		}
		*bp = (*bp)[:0]
		blockPool.Put(bp)
	}
}

// released is what a released tree's members read under the race
// detector: a use after Release renders it (or races with the write).
var released = Member{Key: "released", Value: Value{Kind: String, Str: "design used after Release"}}

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
