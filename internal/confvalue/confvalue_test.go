package confvalue

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

func TestReplace(t *testing.T) {
	t.Setenv("CONFVALUE_SET", "v4lue")
	t.Setenv("CONFVALUE_EMPTY", "")
	t.Setenv("CONFVALUE_SPACE", "  ")
	repl := caddy.NewReplacer()
	tests := []struct {
		in, want, wantErr string
		required          bool
	}{
		{in: "literal", want: "literal"},
		{in: "{env.CONFVALUE_SET}", want: "v4lue"},
		{in: "Bearer {env.CONFVALUE_SET}", want: "Bearer v4lue"},
		{in: "{env.CONFVALUE_EMPTY}", wantErr: "evaluated placeholder {env.CONFVALUE_EMPTY} is empty"},
		{in: "{env.CONFVALUE_UNSET_X}", wantErr: "evaluated placeholder {env.CONFVALUE_UNSET_X} is empty"},
		{in: "Bearer {env.CONFVALUE_EMPTY}", wantErr: "holds an unknown or empty placeholder"},
		{in: "{nope.x}", wantErr: "unrecognized placeholder {nope.x}"},
		{in: "", want: ""},
		{in: "", required: true, wantErr: "value is missing"},
		{in: "{env.CONFVALUE_SPACE}", required: true, wantErr: "empty after placeholder replacement"},
		{in: "{env.CONFVALUE_SPACE}", want: "  "},
		// A brace no "}" closes would be taken for text.
		{in: "{env.CONFVALUE_SET", wantErr: `the "{" at byte 0 starts no placeholder`},
		{in: "a{b{env.CONFVALUE_SET}", wantErr: `the "{" at byte 1 starts no placeholder`},
		{in: `a\{b`, want: "a{b"},
		{in: "{env.CONFVALUE_SET}}", want: "v4lue}"},
	}
	for _, tc := range tests {
		f, name := Replace, "Replace"
		if tc.required {
			f, name = Required, "Required"
		}
		got, err := f(repl, tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s(%q) = %q, %v; want error %q", name, tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s(%q) = %q, %v; want %q", name, tc.in, got, err, tc.want)
		}
	}
}

func TestSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"1048576", 1 << 20, ""},
		{"10MiB", 10 << 20, ""},
		{"512KB", 512000, ""},
		{"1TiB", 1 << 40, ""},
		{"0", 0, "between 1 byte and 1 TiB"},
		{"2TiB", 0, "between 1 byte and 1 TiB"},
		{"huge", 0, `"huge" is not a size`},
		{"-1", 0, "is not a size"},
		{"ten", 0, `"ten" is not a size: write a number of bytes with an optional unit, e.g. 10MiB`},
	}
	for _, tc := range tests {
		got, err := Size(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Size(%q) = %d, %v; want error %q", tc.in, got, err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "strconv") {
				t.Errorf("Size(%q): the message shows a parser's internals: %v", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Size(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}
