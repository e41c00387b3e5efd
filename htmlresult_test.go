package designbridge

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"unicode/utf8"
)

type htmlResultCase struct {
	Name string `json:"name"`
	Text string `json:"text"`
	HTML string `json:"html"`
}

func loadHTMLResultCases(t testing.TB) []htmlResultCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/htmlresult_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var cases []htmlResultCase
	if err := dec.Decode(&cases); err != nil {
		t.Fatalf("testdata/htmlresult_cases.json: %v", err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	return cases
}

func TestHTMLResultCases(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range loadHTMLResultCases(t) {
		if seen[tc.Name] {
			t.Errorf("duplicate case name %q", tc.Name)
		}
		seen[tc.Name] = true
		t.Run(tc.Name, func(t *testing.T) {
			got, wrapped := HTMLResult([]byte(tc.Text))
			if string(got) != tc.HTML {
				t.Errorf("HTMLResult(%q) = %q, want %q", tc.Text, got, tc.HTML)
			}
			// A result different from the text can only come from a wrapper.
			if !wrapped && string(got) != tc.Text {
				t.Errorf("not wrapped but result differs from text")
			}
		})
	}
}

func FuzzHTMLResult(f *testing.F) {
	for _, tc := range loadHTMLResultCases(f) {
		f.Add([]byte(tc.Text))
	}
	f.Add([]byte("\xff{\"body\":\"x\"}"))
	f.Add([]byte(`{"body":{"html":"\ud800"}}`))
	f.Fuzz(func(t *testing.T, text []byte) {
		html, wrapped := HTMLResult(text)
		if !wrapped {
			if !bytes.Equal(html, text) {
				t.Fatalf("unwrapped result differs from text")
			}
			return
		}
		// Only a valid JSON object with a body member can be a wrapper, and
		// the HTML is a decoded JSON string, hence valid UTF-8.
		var top map[string]json.RawMessage
		if err := json.Unmarshal(text, &top); err != nil {
			t.Fatalf("wrapped but text is not a JSON object: %v", err)
		}
		if _, ok := top["body"]; !ok {
			t.Fatalf("wrapped but no body member")
		}
		if !utf8.Valid(html) {
			t.Fatalf("wrapped HTML is not valid UTF-8")
		}
		// Re-encoding the HTML as a string body must give it back.
		again, _ := json.Marshal(map[string]string{"body": string(html)})
		if got, ok := HTMLResult(again); !ok || !bytes.Equal(got, html) {
			t.Fatalf("round trip through {\"body\": string} failed")
		}
	})
}
