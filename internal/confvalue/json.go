package confvalue

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// FieldError is a value of a module's JSON config that cannot be read:
// Path is where it is, as written in the JSON (cache.ttl,
// apps[0].tokens[1]), and Err says what is wrong in the words of the
// config, not of Go.
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *FieldError) Unwrap() error { return e.Err }

// DecodeStrict decodes a module's JSON config into v as Caddy does
// (unknown fields refused). An error names the full path of the first
// value in the document that cannot be read and what to write there
// (a *FieldError): encoding/json names an unknown field without its
// path, a type by its Go name, and a value's own UnmarshalJSON (such as
// caddy.Duration's) no field at all. v is a pointer to a struct without
// an UnmarshalJSON method of its own (a module's UnmarshalJSON passes its
// fields as a plain type). A value whose own UnmarshalJSON calls
// DecodeStrict, or returns a *FieldError, has its inner path joined to
// the outer one.
func DecodeStrict(b []byte, v any) error {
	err := decodeStrict(b, v)
	if err == nil {
		return nil
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) || !json.Valid(b) {
		return err
	}
	// The decode decides what is accepted; the walk only explains a
	// refusal, so that no config reads differently than in Caddy.
	if ferr := check(b, reflect.TypeOf(v), ""); ferr != nil {
		return ferr
	}
	return err
}

func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
)

// check walks the valid JSON raw as encoding/json fills type t from it,
// and returns the first value (in document order) that t cannot hold, at
// path; nil if none is found.
func check(raw []byte, t reflect.Type, path string) error {
	raw = bytes.TrimSpace(raw)
	null := string(raw) == "null"
	if t.Kind() == reflect.Pointer {
		if null {
			return nil // encoding/json sets the pointer to nil
		}
		return check(raw, t.Elem(), path)
	}
	if t == rawMessageType {
		return nil
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
			return ownError(raw, t, path, err)
		}
		return nil
	}
	if null {
		return nil // encoding/json leaves the value as it is
	}
	if raw[0] == '"' && reflect.PointerTo(t).Implements(textUnmarshalerType) {
		if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
			return &FieldError{Path: path, Err: err}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if raw[0] != '{' {
			return typeError(raw, t, path)
		}
		return checkObject(raw, path, func(key string) (reflect.Type, error) {
			fields := jsonFields(t)
			if ft := fieldType(fields, key); ft != nil {
				return ft, nil
			}
			return nil, unknownField(fields)
		})
	case reflect.Map:
		if raw[0] != '{' {
			return typeError(raw, t, path)
		}
		return checkObject(raw, path, func(string) (reflect.Type, error) { return t.Elem(), nil })
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // bytes are base64 text; no config has them
		}
		if raw[0] != '[' {
			return typeError(raw, t, path)
		}
		return checkList(raw, t.Elem(), path)
	case reflect.String:
		if raw[0] != '"' {
			return typeError(raw, t, path)
		}
	case reflect.Bool:
		if raw[0] != 't' && raw[0] != 'f' {
			return typeError(raw, t, path)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return checkInteger(raw, t, path)
	case reflect.Float32, reflect.Float64:
		if !isNumber(raw) {
			return typeError(raw, t, path)
		}
	}
	return nil
}

// checkObject checks each member of the JSON object raw, in order, with
// the type field gives for its key (or field's error, an unknown key).
func checkObject(raw []byte, path string, field func(key string) (reflect.Type, error)) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if dec.Decode(&value) != nil {
			return nil
		}
		at := join(path, key)
		ft, err := field(key)
		if err != nil {
			return &FieldError{Path: at, Err: err}
		}
		if err := check(value, ft, at); err != nil {
			return err
		}
	}
	return nil
}

// checkList checks each element of the JSON array raw, in order.
func checkList(raw []byte, elem reflect.Type, path string) error {
	var values []json.RawMessage
	if json.Unmarshal(raw, &values) != nil {
		return nil
	}
	for i, value := range values {
		if err := check(value, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// join appends the path inner (a key, or an index such as [2]) to path.
func join(path, inner string) string {
	switch {
	case path == "":
		return inner
	case inner == "":
		return path
	case strings.HasPrefix(inner, "["):
		return path + inner
	}
	return path + "." + inner
}

// ownError is the error of a value that reads itself (UnmarshalJSON),
// at path: its own FieldError joined to path, a duration's in plain
// words, a Go type error as what to write instead.
func ownError(raw []byte, t reflect.Type, path string, err error) error {
	var ferr *FieldError
	if errors.As(err, &ferr) {
		return &FieldError{Path: join(path, ferr.Path), Err: ferr.Err}
	}
	if t == durationType {
		if raw[0] == '"' {
			var s string
			_ = json.Unmarshal(raw, &s)
			return &FieldError{Path: path, Err: fmt.Errorf("%s is not a duration: write a number with a unit, such as 500ms, 10s, 5m, 2h or 1d", quoteShort(s))}
		}
		return typeError(raw, t, path)
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return typeError(raw, t, path)
	}
	return &FieldError{Path: path, Err: err}
}

// jsonField is a field as encoding/json sees it.
type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFields lists the fields encoding/json fills in a struct of type t,
// with those of embedded structs that have no name of their own.
func jsonFields(t reflect.Type) []jsonField {
	var fields []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && f.Tag.Get("json") == "-" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			fields = append(fields, jsonFields(ft)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, jsonField{name, f.Type})
	}
	return fields
}

// fieldType is the type of the field encoding/json fills from key,
// matched as it matches them (an exact name first, else without regard
// to case), or nil.
func fieldType(fields []jsonField, key string) reflect.Type {
	var folded reflect.Type
	for _, f := range fields {
		if f.name == key {
			return f.typ
		}
		if folded == nil && strings.EqualFold(f.name, key) {
			folded = f.typ
		}
	}
	return folded
}
