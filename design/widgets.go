package design

import (
	"errors"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The legacy editor metadata of 0.0.1-era designs: "widgets" arrays, up
// to half of such a document, which no renderer reads. The parser checks
// them like any value (syntax, every limit) but keeps each as its JSON
// text, a Value of kind Raw, which Encode writes back compacted.

// widgetsKey is the member name, as written, whose array value is kept
// as Raw.
const widgetsKey = `"widgets"`

// errNotRaw reports a widgets array that cannot be kept as written (it
// holds invalid UTF-8, which decoding replaces): the document is parsed
// again with every value decoded.
var errNotRaw = errors.New("raw value holds invalid UTF-8")

// rawValue reads into v, as a Raw value, the array that begins with tok:
// checked for syntax and against every limit as any value, but not built.
func (p *parser) rawValue(v *Value, tok jsontext.Token, from int64, depth int) error {
	start := p.dec.InputOffset() - 1 // the '[' just read
	if err := p.skip(tok, from, depth); err != nil {
		return err
	}
	text := p.src[start:p.dec.InputOffset()]
	if p.anyUTF8 && !utf8.ValidString(text) {
		return errNotRaw
	}
	v.Kind, v.Str = Raw, text
	return nil
}
