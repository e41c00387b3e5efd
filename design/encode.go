package design

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Encode returns the document as JSON: every member it was decoded with,
// known or unknown, in the original order, with number literals as
// written. (Strings are re-escaped, so the bytes may differ from the input
// while the JSON value is the same.)
func (d *Design) Encode() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(4096)
	appendValue(&b, &d.Root)
	return b.Bytes(), nil
}

// MarshalJSON implements json.Marshaler with Encode.
func (d *Design) MarshalJSON() ([]byte, error) { return d.Encode() }

// MarshalJSON implements json.Marshaler for a subtree.
func (v *Value) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	appendValue(&b, v)
	return b.Bytes(), nil
}

func appendValue(b *bytes.Buffer, v *Value) {
	switch v.Kind {
	case Absent, Null:
		b.WriteString("null")
	case Bool:
		if v.Bool {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case Number:
		b.WriteString(v.Str)
	case Raw:
		// Checked when decoded, so Compact cannot fail; on the off
		// chance, the text as written is still JSON.
		if json.Compact(b, []byte(v.Str)) != nil {
			b.WriteString(v.Str)
		}
	case String:
		appendString(b, v.Str)
	case Array:
		b.WriteByte('[')
		for i := range v.Members {
			if i > 0 {
				b.WriteByte(',')
			}
			appendValue(b, &v.Members[i].Value)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i := range v.Members {
			if i > 0 {
				b.WriteByte(',')
			}
			appendString(b, v.Members[i].Key)
			b.WriteByte(':')
			appendValue(b, &v.Members[i].Value)
		}
		b.WriteByte('}')
	}
}

const hexDigits = "0123456789abcdef"

func appendString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		i += size
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}
