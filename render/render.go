// Package render turns a design into email HTML and plain text. It knows
// nothing of Caddy.
package render

import (
	"errors"

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

// HTML renders d as one complete email HTML document: a hybrid (fluid)
// layout of role="presentation" tables and inline-block columns, with
// ghost tables for Outlook on Windows and one @media block for mobile.
// Unknown module types render as nothing and are listed in Warnings.
// The output is deterministic.
//
// A design whose blocks hold members of the wrong type (a button label
// that is an object, …) is refused with a *design.PathError naming the
// block, as Decode refuses a malformed design.
func HTML(d *design.Design) (*Output, error) {
	if d == nil {
		return nil, errors.New("render: nil design")
	}
	if err := check(d); err != nil {
		return nil, err
	}
	w := newEmailWriter(d)
	w.document()
	w.finishWarnings()
	body, pooled := w.assemble()
	w.recycle()
	return &Output{Body: body, Warnings: w.warnings, pooled: pooled}, nil
}

// PlainText renders d as plain text in reading order (docs/contracts.md,
// "/v1/message/plain-text"): links as "label (url)", images by alt text,
// paragraphs separated by blank lines. The implementation is plainText in
// plaintext.go. It refuses what HTML refuses, with the same error.
func PlainText(d *design.Design) (*Output, error) {
	if d == nil {
		return nil, errors.New("render: nil design")
	}
	if err := check(d); err != nil {
		return nil, err
	}
	return plainText(d)
}
