package confvalue

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
)

var durationType = reflect.TypeFor[caddy.Duration]()

// typeError is the error of the JSON value raw where type t is expected:
// what to write, and what was written (see written).
func typeError(raw []byte, t reflect.Type, path string) error {
	return &FieldError{Path: path, Err: fmt.Errorf("expected %s, got %s", expected(t), written(raw, t))}
}

// expected says in the config's words what a value of type t is written
// as.
func expected(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		return `a duration such as "10s"`
	}
	if !reflect.PointerTo(t).Implements(unmarshalerType) && reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return "a string" // encoding/json reads it from a string's text
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		switch e := expected(t.Elem()); {
		case e == "a string" || e == "an object":
			return "a list of " + strings.TrimPrefix(strings.TrimPrefix(e, "a "), "an ") + "s"
		default:
			return "a list"
		}
	}
	return "another value"
}

// written names the kind of the JSON value raw where type t is expected,
// or the value itself when it is true, false or null, or a number where
// t takes one (1.5 for a whole number). A string's text, and a number
// where t takes none, are left out: either may be a secret, put in the
// wrong field or left unquoted in its own ("token": 12345678).
func written(raw []byte, t reflect.Type) string {
	return Written(raw, numeric(t))
}

// Written names the JSON value raw as a config error may repeat it, for
// a value that reads itself (UnmarshalJSON): its kind ("a string", "a
// list"), or the value itself when it is true, false or null, or a
// number where a number belongs (number). See written.
func Written(raw []byte, number bool) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	}
	if isNumber(raw) && !number {
		return "a number"
	}
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

// numeric reports whether a value of type t is written as a number (a
// duration may be, in nanoseconds).
func numeric(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// checkInteger checks that the JSON value raw is a whole number that an
// integer of type t holds.
func checkInteger(raw []byte, t reflect.Type, path string) error {
	if !isNumber(raw) {
		return typeError(raw, t, path)
	}
	s := string(raw)
	var err error
	unsigned := t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64
	if unsigned {
		_, err = strconv.ParseUint(s, 10, t.Bits())
	} else {
		_, err = strconv.ParseInt(s, 10, t.Bits())
	}
	if err == nil {
		return nil
	}
	f, _ := strconv.ParseFloat(s, 64) // ±Inf when out of its range
	switch {
	case f != math.Trunc(f), unsigned && f < 0, !outside(f, t):
		// 1.5; -1 where only 0 or more is taken; 1e3 or 2.0, which
		// encoding/json does not take for an integer either
		return typeError(raw, t, path)
	case f > 0:
		var most string
		if unsigned {
			most = strconv.FormatUint(math.MaxUint64>>(64-t.Bits()), 10)
		} else {
			most = strconv.FormatInt(math.MaxInt64>>(64-t.Bits()), 10)
		}
		return &FieldError{Path: path, Err: fmt.Errorf("expected %s up to %s, got %s", expected(t), most, written(raw, t))}
	}
	least := strconv.FormatInt(math.MinInt64>>(64-t.Bits()), 10)
	return &FieldError{Path: path, Err: fmt.Errorf("expected %s from %s, got %s", expected(t), least, written(raw, t))}
}

// outside reports whether the whole number f is out of the range of the
// integer type t.
func outside(f float64, t reflect.Type) bool {
	bits := float64(t.Bits())
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		return f >= math.Exp2(bits)
	}
	return f >= math.Exp2(bits-1) || f < -math.Exp2(bits-1)
}

// isNumber reports whether the valid JSON value raw is a number.
func isNumber(raw []byte) bool {
	return raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'
}

// quoteShort quotes s, cut after about 32 bytes.
func quoteShort(s string) string {
	for i := range s {
		if i >= 32 {
			return strconv.Quote(s[:i] + "…")
		}
	}
	return strconv.Quote(s)
}

// unknownField is the error of a key that names none of fields.
func unknownField(fields []jsonField) error {
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		names = append(names, f.name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return errors.New("unknown field")
	}
	return fmt.Errorf("unknown field (known here: %s)", strings.Join(names, ", "))
}
