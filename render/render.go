// Package render turns a design into email HTML and plain text. It knows
// nothing of Caddy.
package render

import (
	"errors"

	"github.com/designbridge/caddy-designbridge/design"
)

// Output is a rendered document.
// TEMPORARY SKELETON: the render helper replaces this file.
type Output struct {
	Body     []byte   // the HTML document or the plain text
	Warnings []string // e.g. unknown module types, omitted forms
}

// HTML renders d as one complete email HTML document.
func HTML(d *design.Design) (*Output, error) { return nil, errors.New("render: not implemented yet") }

// PlainText renders d as plain text in reading order.
func PlainText(d *design.Design) (*Output, error) {
	return nil, errors.New("render: not implemented yet")
}
