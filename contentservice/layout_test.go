package contentservice

import (
	"testing"

	"github.com/designbridge/caddy-designbridge/render"
)

// TestLayoutOf: each export path renders in its collection's layout.
func TestLayoutOf(t *testing.T) {
	for _, tt := range []struct {
		path string
		want render.Layout
	}{
		{PathHTML, render.LayoutEmail},
		{PathPlainText, render.LayoutEmail},
		{PathPageHTML, render.LayoutPage},
		{PathPagePlainText, render.LayoutPage},
		{PathPopupHTML, render.LayoutPopup},
		{PathPopupPlainText, render.LayoutPopup},
		{"/v1/row/html", render.LayoutEmail},
	} {
		if got := layoutOf(tt.path); got != tt.want {
			t.Errorf("layoutOf(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
