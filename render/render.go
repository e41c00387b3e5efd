// Package render turns a design into email HTML (or a web page, or a popup
// fragment: see Layout) and plain text. It knows nothing of Caddy.
package render

import (
	"errors"
	"fmt"

	"github.com/designbridge/caddy-designbridge/design"
)

// Output is a rendered document.
type Output struct {
	Body     []byte   // the HTML document or the plain text
	Warnings []string // e.g. unknown module types, omitted forms

	pooled *[]byte // the recycled buffer behind Body (see Release)
}

// Release lets a later render reuse Body's memory. Calling it is optional
// (a server calls it once the answer is written); Body must not be used
// afterwards.
func (o *Output) Release() {
	if o == nil || o.pooled == nil {
		return
	}
	if cap(o.Body) <= maxPooledBody {
		*o.pooled = o.Body[:0]
		bodyBufs.Put(o.pooled)
	}
	o.pooled, o.Body = nil, nil
}

// Limits are a render's options. Mostly they bound what a render
// produces, so that no design can make it use unbounded memory: a few
// bytes of design can stand for many bytes of HTML (a colour repeated on
// every link, a row of empty columns).
type Limits struct {
	// MaxOutput is the largest document, in bytes, a render may produce;
	// 0 means DefaultMaxOutput. Past it the render stops at once and
	// fails with ErrOutputTooLarge.
	MaxOutput int

	// Layout is the HTML's layout (layout.go); the zero value is
	// LayoutEmail. Plain text ignores it.
	Layout Layout
}

// DefaultMaxOutput is the output bound when Limits.MaxOutput is 0: twice
// a content service's default largest body, and some 25 times the largest
// document a real design in the corpus renders to.
const DefaultMaxOutput = 8 << 20

// ErrOutputTooLarge is returned (wrapped, with the limit) when a render
// would produce more than Limits.MaxOutput bytes.
var ErrOutputTooLarge = errors.New("render: output over the limit")

func (l Limits) withDefaults() Limits {
	if l.MaxOutput <= 0 {
		l.MaxOutput = DefaultMaxOutput
	}
	return l
}

// outputFull is the panic value that unwinds a render whose output has
// crossed the limit (emailWriter.full, textWriter.checkSize): stopping
// every loop of every block at once, without threading an error through
// each of them.
type outputFull struct{}

// stopWhenFull turns the outputFull panic into ErrOutputTooLarge in *err
// and lets any other panic go on. Deferred by the renders.
func stopWhenFull(err *error, max int) {
	if v := recover(); v != nil {
		if _, ok := v.(outputFull); !ok {
			panic(v)
		}
		*err = tooLarge(max)
	}
}

func tooLarge(max int) error {
	return fmt.Errorf("%w: more than %d bytes", ErrOutputTooLarge, max)
}

// HTML is HTMLWithLimits with the default limits.
func HTML(d *design.Design) (*Output, error) { return HTMLWithLimits(d, Limits{}) }

// HTMLWithLimits renders d in lim.Layout. The email layout is one
// complete email HTML document: a hybrid (fluid) layout of
// role="presentation" tables and inline-block columns, with ghost tables
// for Outlook on Windows and one @media block for mobile; the page and
// popup layouts are described in layout.go. Unknown module types render
// as nothing and are listed in Warnings. The output is deterministic.
//
// A design whose blocks hold members of the wrong type (a button label
// that is an object, …) is refused with a *design.PathError naming the
// block, as Decode refuses a malformed design. A document over
// lim.MaxOutput is refused with ErrOutputTooLarge, as soon as the output
// crosses the bound.
func HTMLWithLimits(d *design.Design, lim Limits) (*Output, error) {
	if d == nil {
		return nil, errors.New("render: nil design")
	}
	if !lim.Layout.valid() {
		return nil, fmt.Errorf("render: unknown layout %v", lim.Layout)
	}
	bs, err := decodeBlocks(d)
	if err != nil {
		return nil, err
	}
	lim = lim.withDefaults()
	w := newEmailWriter(d, bs, lim.MaxOutput)
	document, assemble := w.document, w.assemble
	if lim.Layout != LayoutEmail {
		w.fluid = true
		web := &webWriter{emailWriter: w, popup: lim.Layout == LayoutPopup}
		document, assemble = web.document, web.assemble
	}
	if err := w.render(document); err != nil {
		w.recycle()
		return nil, err
	}
	body, pooled := assemble()
	w.recycle()
	if len(body) > lim.MaxOutput {
		// The head (title, font links) was the last straw.
		return nil, tooLarge(lim.MaxOutput)
	}
	return &Output{Body: body, Warnings: w.warn.list(), pooled: pooled}, nil
}

// render writes the body with document, or fails with ErrOutputTooLarge.
func (w *emailWriter) render(document func()) (err error) {
	defer stopWhenFull(&err, w.maxOutput)
	document()
	// What was written since the last check: the head comes on top.
	w.checkTotal()
	return nil
}

// PlainText is PlainTextWithLimits with the default limits.
func PlainText(d *design.Design) (*Output, error) { return PlainTextWithLimits(d, Limits{}) }

// PlainTextWithLimits renders d as plain text in reading order (docs/contracts.md,
// "/v1/message/plain-text"): links as "label (url)", images by alt text,
// paragraphs separated by blank lines. The implementation is plainText in
// plaintext.go. It refuses what HTMLWithLimits refuses, with the same
// errors.
func PlainTextWithLimits(d *design.Design, lim Limits) (*Output, error) {
	if d == nil {
		return nil, errors.New("render: nil design")
	}
	bs, err := decodeBlocks(d)
	if err != nil {
		return nil, err
	}
	return plainText(d, bs, lim.withDefaults().MaxOutput)
}
