package contract

import "testing"

func TestIsJSON(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                  true,
		"application/json; charset=UTF-8":   true,
		"Application/JSON":                  true,
		" application/json ":                true,
		"application/json;":                 true,
		"application/jsonx":                 false,
		"application/problem+json":          false,
		"application/json-patch+json":       false,
		"":                                  false,
		"text/plain":                        false,
		"text/plain;charset=UTF-8":          false,
		"text/x+json":                       false,
		"application/x-www-form-urlencoded": false,
		"multipart/form-data; boundary=x":   false,
		"application/json-seq":              false,
		"application/json; =broken":         false,
	} {
		if got := IsJSON(ct); got != want {
			t.Errorf("IsJSON(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestToken(t *testing.T) {
	for in, want := range map[string]string{
		"abc":          "abc",
		"Bearer abc":   "abc",
		"bearer abc":   "abc",
		"BEARER  abc ": "abc",
		" Bearer abc":  "abc",
		"Bearerabc":    "Bearerabc",
		"Bearer ":      "",
		"Bearer":       "",
		"":             "",
		"a b":          "",
		"Bearer a\tb":  "",
	} {
		got, err := Token(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("Token(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
