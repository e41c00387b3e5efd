package contract

import (
	"strings"
	"testing"
)

func TestValidUID(t *testing.T) {
	for _, tt := range []struct {
		uid  string
		want bool
	}{
		{"customer-42", true},
		{"A_z-09", true},
		{strings.Repeat("a", MaxUIDLen), true},
		{"", false},
		{strings.Repeat("a", MaxUIDLen+1), false},
		{"a b", false},
		{"a/b", false},
		{"a.b", false},
		{"é", false},
		{"a\x00", false},
		{"a\n", false},
	} {
		if got := ValidUID(tt.uid); got != tt.want {
			t.Errorf("ValidUID(%q) = %v, want %v", tt.uid, got, tt.want)
		}
	}
}
