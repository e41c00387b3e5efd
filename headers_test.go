package designbridge

import (
	"net/http"
	"testing"
)

// TestForwardedKey: requests whose forward_headers differ in any way have
// keys of their own, so that no answer is shared between them.
func TestForwardedKey(t *testing.T) {
	b := &Bridge{ForwardHeaders: []string{"X-A", "X-B"}}
	if err := b.resolveForwardHeaders(); err != nil {
		t.Fatal(err)
	}
	headers := []http.Header{
		{},
		{"X-A": {""}},
		{"X-A": {"1"}},
		{"X-A": {"1", "2"}},
		{"X-A": {"1,2"}},
		{"X-A": {`1";"2`}},
		{"X-A": {"1"}, "X-B": {"2"}},
		{"X-B": {"1"}},
		{"X-B": {"1"}, "X-C": {"ignored"}}, // the same as the one before
	}
	seen := map[string]int{}
	for i, h := range headers {
		k := b.forwardedKey(h)
		if j, dup := seen[k]; dup && i != len(headers)-1 {
			t.Errorf("%v and %v have one key %q", headers[j], h, k)
		}
		seen[k] = i
	}
	if len(seen) != len(headers)-1 {
		t.Errorf("%d keys for %d header sets, want %d", len(seen), len(headers), len(headers)-1)
	}
	if k := (&Bridge{}).forwardedKey(http.Header{"X-A": {"1"}}); k != "" {
		t.Errorf("without forward_headers the key part is %q, want empty", k)
	}
}
