package render

import (
	"bytes"

	"golang.org/x/net/html/atom"
)

// How rich text nests in a browser. The sanitiser writes what a browser's
// parser builds as it is written: no element of the rich text ends one of
// the renderer's (a heading's <h1> at an <h2>, a button's link at an
// <a>), puts itself in the layout's table, or leaves an end tag that the
// parser reads as a new element.

// openTag is an element open in rich text: a as written, out as the
// sanitiser wrote it (a span for a block element in phrasing content).
// ended marks a paragraph a browser has ended (endParagraph).
type openTag struct {
	a, out atom.Atom
	ended  bool
}

// tablePart reports whether a is an element a browser places in the
// innermost open table (closing the cell or row it is in).
func tablePart(a atom.Atom) bool {
	switch a {
	case atom.Caption, atom.Colgroup, atom.Col, atom.Tbody, atom.Thead, atom.Tfoot, atom.Tr, atom.Td, atom.Th:
		return true
	}
	return false
}

// endsParagraph reports whether a browser's parser ends an open
// paragraph at a start tag of the allowed element a (in a standards-mode
// document, as the renderer's are), whatever else is open in it.
func endsParagraph(a atom.Atom) bool {
	switch a {
	case atom.Blockquote, atom.Center, atom.Dd, atom.Div, atom.Dl, atom.Dt, atom.H1, atom.H2, atom.H3,
		atom.H4, atom.H5, atom.H6, atom.Hr, atom.Li, atom.Ol, atom.P, atom.Pre, atom.Table, atom.Ul:
		return true
	}
	return false
}

// endParagraph marks ended the paragraph a browser's parser ends at a
// start tag that endsParagraph: the innermost one not yet ended, unless a
// table or a cell is open inside it (a browser's "button scope"). It
// reports whether there was one.
func endParagraph(stack []openTag) bool {
	for i := len(stack) - 1; i >= 0; i-- {
		switch stack[i].out {
		case atom.P:
			if !stack[i].ended {
				stack[i].ended = true
				return true
			}
		case atom.Table, atom.Td, atom.Th, atom.Caption:
			return false
		}
	}
	return false
}

// endTableParagraphs marks ended the paragraphs a browser's parser ends
// at a start tag of a table part (a cell, a row…): those open inside the
// innermost table, which it closes back to the table's structure. It
// returns how many.
func endTableParagraphs(stack []openTag) (ended int) {
	for i := len(stack) - 1; i >= 0 && stack[i].out != atom.Table; i-- {
		if stack[i].out == atom.P && !stack[i].ended {
			stack[i].ended = true
			ended++
		}
	}
	return ended
}

// phrasingTag is the element written for the allowed element a in
// phrasing content: a itself when it is phrasing content, a span for a
// block element (the vendor writes a button label's paragraph so, its
// style on the span), 0 for one left out (<col>, and <hr>, which is a
// line break). In a heading, a block element is not only invalid: a
// browser's parser ends the heading at an <h2>, and the rest of the
// text loses the heading's font, size and colour; a <p> or an <h2> that
// stays inside brings its own margins and size.
func phrasingTag(a atom.Atom) atom.Atom {
	switch a {
	case atom.Blockquote, atom.Caption, atom.Center, atom.Colgroup, atom.Dd, atom.Div, atom.Dl, atom.Dt,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Li, atom.Ol, atom.P, atom.Pre,
		atom.Table, atom.Tbody, atom.Td, atom.Tfoot, atom.Th, atom.Thead, atom.Tr, atom.Ul:
		return atom.Span
	case atom.Hr, atom.Col:
		return 0
	}
	return a
}

// phrasingLines puts a line break where a block element written as a
// span (phrasingTag) starts or ends a line that holds something, so that
// the text keeps its lines ("<p>a</p><p>b</p>" is "a", then "b").
type phrasingLines struct {
	filled  bool // the current line holds something
	pending bool // a block ended on a filled line: break before what follows
}

// boundary is the start of a block (or an <hr>): it begins a new line.
func (l *phrasingLines) boundary(w *emailWriter) {
	if l.filled {
		w.s("<br>")
	}
	l.filled, l.pending = false, false
}

// ended is the end of a block: what follows is on a new line.
func (l *phrasingLines) ended() { l.pending = l.pending || l.filled }

// broken is a <br> of the rich text's own.
func (l *phrasingLines) broken() { l.filled, l.pending = false, false }

// text is text about to be written: white space alone fills no line.
func (l *phrasingLines) text(w *emailWriter, text []byte) {
	if len(bytes.TrimLeft(text, " \t\n\f\r")) > 0 {
		l.content(w)
	}
}

// content is something visible about to be written.
func (l *phrasingLines) content(w *emailWriter) {
	if l.pending {
		w.s("<br>")
		l.pending = false
	}
	l.filled = true
}

// globalAttr reports whether an allowed attribute is one any element
// may have.
func globalAttr(key string) bool {
	switch key {
	case "style", "class", "title", "dir", "lang", "id", "role", "aria-label", "aria-hidden":
		return true
	}
	return false
}
