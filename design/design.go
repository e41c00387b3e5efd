// Package design is the model of the editor's design JSON. It knows nothing
// of Caddy.
package design

import "errors"

// Design is a decoded design document.
// TEMPORARY SKELETON: the design helper replaces this file.
type Design struct{}

// PathError reports the first problem found in a document that is JSON but
// not a design, with the JSON path where it was found.
type PathError struct {
	Path string // e.g. "page.rows[3].columns[0].modules[2]"
	Msg  string // e.g. "descriptor.image.src must be a string"
}

func (e *PathError) Error() string { return e.Path + ": " + e.Msg }

// ErrNotJSON is returned (wrapped) when the input is not JSON at all.
var ErrNotJSON = errors.New("design: not JSON")

// ErrTooLarge is returned (wrapped) when the input exceeds a bound (size,
// depth, counts).
var ErrTooLarge = errors.New("design: over a limit")

// Decode parses a design document.
func Decode(data []byte) (*Design, error) { return nil, errors.New("design: not implemented yet") }
