package contentservice

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzLoginMembers: loginMembers reads exactly what encoding/json reads
// into a map, except that it refuses a body naming a member twice.
func FuzzLoginMembers(f *testing.F) {
	for _, seed := range []string{
		`{"client_id":"a","client_secret":"s","uid":"u"}`,
		`{"uid":"a","uid":"b"}`,
		`{"uid":"a","\u0075id":"b"}`,
		`{"uid":{"uid":1,"uid":2}}`,
		` { "a" : [1, {"b": null}] } `,
		`{"a":1}{"b":2}`, `{"a":1,}`, `[1]`, `null`, `{}`, `{"a":"\xff"}`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := loginMembers(body)
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(body, &want)
		if wantErr == nil && want == nil {
			wantErr = errors.New("null")
		}
		switch {
		case err == nil && wantErr != nil:
			t.Fatalf("%q: accepted, encoding/json refuses: %v", body, wantErr)
		case err != nil && wantErr == nil && !errors.Is(err, errDuplicateMember):
			t.Fatalf("%q: refused (%v), encoding/json accepts", body, err)
		case err == nil:
			if len(got) != len(want) {
				t.Fatalf("%q: %d members, encoding/json %d", body, len(got), len(want))
			}
			for k, v := range want {
				if !bytes.Equal(bytes.TrimSpace(got[k]), bytes.TrimSpace(v)) {
					t.Fatalf("%q: member %q is %s, encoding/json %s", body, k, got[k], v)
				}
			}
		}
	})
}
