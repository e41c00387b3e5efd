package design

import (
	"strconv"
	"strings"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON kinds. Absent is the zero Kind: what Get returns for a missing
// member, so callers can chain lookups without nil checks.
const (
	Absent Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
	// Raw is a value kept as its JSON text (Str, as written), checked
	// but not decoded: a member no renderer reads, such as the legacy
	// editor metadata `widgets` or a block's `translations` (see
	// raw.go). Encode writes it back; Expand decodes it.
	Raw
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	case Raw:
		return "raw JSON"
	}
	return "absent"
}

// Value is one JSON value of a decoded document. The tree keeps member
// order and number literals exactly as written, so that a document
// re-encodes with every member it had, known to this package or not.
//
// The accessors are tolerant on purpose: designs spell the same thing as a
// number, a "px" string or a percentage, and use [] where {} is meant.
// A nil *Value behaves as an absent value.
type Value struct {
	Kind Kind
	Bool bool
	Str  string // String: the text; Number: the literal as written
	// Members are an object's members in document order, or an array's
	// elements with empty keys: one slice for both keeps a Value at 48
	// bytes, and documents are mostly Values. Index and Len read arrays.
	Members []Member
}

// Member is one name/value pair of an object, or one element of an array
// (Key empty).
type Member struct {
	Key   string
	Value Value
}

var absent Value

// Get returns the member named key of an object, or an absent value. An
// empty array is treated as an empty object (PHP-style encoders write []
// for {}). When a key occurs twice the last one wins, as in encoding/json.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Object {
		return &absent
	}
	for i := len(v.Members) - 1; i >= 0; i-- {
		if v.Members[i].Key == key {
			return &v.Members[i].Value
		}
	}
	return &absent
}

// GetAny returns the first present member among keys (for alternative
// spellings such as "verticalAlign" and "vertical-align").
func (v *Value) GetAny(keys ...string) *Value {
	for _, k := range keys {
		if m := v.Get(k); m.Kind != Absent && m.Kind != Null {
			return m
		}
	}
	return &absent
}

// At walks a chain of object keys.
func (v *Value) At(keys ...string) *Value {
	for _, k := range keys {
		v = v.Get(k)
	}
	return v
}

// Index returns the i-th element of an array, or an absent value.
func (v *Value) Index(i int) *Value {
	if v == nil || v.Kind != Array || i < 0 || i >= len(v.Members) {
		return &absent
	}
	return &v.Members[i].Value
}

// Len is the number of array elements or object members.
func (v *Value) Len() int {
	if v == nil {
		return 0
	}
	if v.Kind == Array || v.Kind == Object {
		return len(v.Members)
	}
	return 0
}

// Present reports whether the value exists and is not null.
func (v *Value) Present() bool { return v != nil && v.Kind != Absent && v.Kind != Null }

// IsObjectLike reports whether v can stand for an object: an object, or an
// empty array (the [] written for {}).
func (v *Value) IsObjectLike() bool {
	return v != nil && (v.Kind == Object || (v.Kind == Array && len(v.Members) == 0))
}

// Text returns a string value, or a number's literal, or "" otherwise.
func (v *Value) Text() string {
	if v == nil {
		return ""
	}
	switch v.Kind {
	case String, Number:
		return v.Str
	case Bool:
		if v.Bool {
			return "true"
		}
		return "false"
	}
	return ""
}

// Truthy interprets booleans, and tolerates "true"/"false" strings and 0/1.
func (v *Value) Truthy() bool {
	if v == nil {
		return false
	}
	switch v.Kind {
	case Bool:
		return v.Bool
	case String:
		s := strings.TrimSpace(v.Str)
		return strings.EqualFold(s, "true") || s == "1"
	case Number:
		f, err := strconv.ParseFloat(v.Str, 64)
		return err == nil && f != 0
	}
	return false
}

// BoolOr returns the boolean meaning of v, or def when v is absent or null.
func (v *Value) BoolOr(def bool) bool {
	if !v.Present() {
		return def
	}
	return v.Truthy()
}

// Number parses a length-like value: 338, 338.5, "245px", "10", "100%",
// "0". It reports the unit ("px", "%", "" …) so callers can tell pixels
// from percentages. ok is false when v is not numeric.
func (v *Value) Number() (n float64, unit string, ok bool) {
	if v == nil {
		return 0, "", false
	}
	switch v.Kind {
	case Number:
		if f, ok := wholeNumber(v.Str); ok {
			return f, "", true
		}
		f, err := strconv.ParseFloat(v.Str, 64)
		return f, "", err == nil
	case String:
		return ParseLength(v.Str)
	}
	return 0, "", false
}

// Px returns v as pixels: numbers and "<n>px"/"<n>" strings. Percentages
// and other units are not pixels (ok false).
func (v *Value) Px() (float64, bool) {
	n, unit, ok := v.Number()
	if !ok || (unit != "" && unit != "px") {
		return 0, false
	}
	return n, true
}

// ParseLength splits a CSS length like "154.078px", "100%", "0", "1.5em"
// into its number and unit.
func ParseLength(s string) (n float64, unit string, ok bool) {
	s = strings.TrimSpace(s)
	end := lengthNumberEnd(s)
	if end == 0 {
		return 0, "", false
	}
	unit = strings.TrimSpace(s[end:])
	if unit != "px" && unit != "" {
		unit = strings.ToLower(unit)
	}
	if f, ok := wholeNumber(s[:end]); ok {
		return f, unit, true
	}
	f, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		return 0, "", false
	}
	return f, unit, true
}

// lengthNumberEnd returns how many leading bytes of s make up the number
// of a CSS length ("154.078" of "154.078px").
func lengthNumberEnd(s string) int {
	end := 0
	for end < len(s) {
		c := s[end]
		if (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || ((c == 'e' || c == 'E') && end > 0 && end+1 < len(s) && (s[end+1] >= '0' && s[end+1] <= '9' || s[end+1] == '-')) {
			end++
			continue
		}
		break
	}
	return end
}

// wholeNumber reads s when it is a small whole number ("10", "600"),
// which most lengths are: no need for ParseFloat.
func wholeNumber(s string) (float64, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return float64(n), true
}

// Style is a CSS property object (style, computedStyle, mobileStyle, …)
// read tolerantly: any value kind becomes text, [] is an empty style.
type Style struct{ V *Value }

// StyleOf wraps an object value as a Style.
func StyleOf(v *Value) Style { return Style{V: v} }

// Get returns the property as text ("" when absent).
func (s Style) Get(prop string) string { return strings.TrimSpace(s.V.Get(prop).Text()) }

// Value returns the raw property value.
func (s Style) Value(prop string) *Value { return s.V.Get(prop) }

// Has reports whether the property is present and non-empty.
func (s Style) Has(prop string) bool { return s.Get(prop) != "" }

// Px returns a property as pixels.
func (s Style) Px(prop string) (float64, bool) { return s.V.Get(prop).Px() }

// Len is the number of properties.
func (s Style) Len() int { return s.V.Len() }

// Each calls fn for every property in document order; values are text.
func (s Style) Each(fn func(prop, value string)) {
	if s.V == nil || s.V.Kind != Object {
		return
	}
	for i := range s.V.Members {
		m := &s.V.Members[i]
		fn(m.Key, strings.TrimSpace(m.Value.Text()))
	}
}

// GetAny returns the first non-empty property among alternative spellings
// ("backgroundColor" / "background-color").
func (s Style) GetAny(props ...string) string {
	for _, p := range props {
		if v := s.Get(p); v != "" {
			return v
		}
	}
	return ""
}
