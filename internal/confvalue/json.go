package confvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// DecodeStrict decodes a module's JSON config into v as Caddy does
// (unknown fields refused), and prefixes an error with the path of the
// field whose value caused it (cache.ttl): the error of a value with its
// own UnmarshalJSON, such as caddy.Duration's, names no field. v is a
// pointer to a struct without an UnmarshalJSON method of its own (a
// module's UnmarshalJSON passes its fields as a plain type).
func DecodeStrict(b []byte, v any) error {
	err := decodeStrict(b, v)
	if err == nil || strings.HasPrefix(err.Error(), "json: unknown field") {
		return err
	}
	// A type error knows its field; another (a value's own UnmarshalJSON)
	// is found by decoding the fields one at a time.
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Errorf("%s: %w", typeErr.Field, err)
	}
	if path := failingField(b, reflect.TypeOf(v), err.Error()); path != "" {
		return fmt.Errorf("%s: %w", path, err)
	}
	return err
}

func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// failingField finds, in the JSON object b decoded into type t, the field
// that fails on its own with the error text want (else the first that
// fails, by name), and within it, when it is an object of a struct type,
// the field that fails: a dotted path, or "".
func failingField(b []byte, t reflect.Type, want string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil {
		return ""
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	found := ""
	for _, key := range keys {
		one, err := json.Marshal(map[string]json.RawMessage{key: fields[key]})
		if err != nil {
			continue
		}
		err = decodeStrict(one, reflect.New(t).Interface())
		if err == nil {
			continue
		}
		if found == "" || err.Error() == want {
			found = key
		}
		if err.Error() == want {
			break
		}
	}
	if found == "" {
		return ""
	}
	if ft, ok := jsonFieldType(t, found); ok {
		if sub := failingField(fields[found], ft, want); sub != "" {
			return found + "." + sub
		}
	}
	return found
}

// jsonFieldType is the type of t's field that encoding/json fills from
// key, matched as it matches them (an exact name first, else without
// regard to case).
func jsonFieldType(t reflect.Type, key string) (reflect.Type, bool) {
	var folded reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f.Type, true
		}
		if folded == nil && strings.EqualFold(name, key) {
			folded = f.Type
		}
	}
	return folded, folded != nil
}
