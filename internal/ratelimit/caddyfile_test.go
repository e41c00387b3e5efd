package ratelimit

import (
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args    string
		offOK   bool
		n       int
		window  time.Duration
		off     bool
		wantErr string
	}{
		{args: "30 per 1m", n: 30, window: time.Minute},
		{args: "5 10s", n: 5, window: 10 * time.Second},
		{args: "off", offOK: true, off: true},
		{args: "off", wantErr: "want <requests> [per] <duration>, got 1 arguments"},
		{args: "5", offOK: true, wantErr: "want <requests> [per] <duration> or off, got 1 arguments"},
		{args: "5 per 1m x", wantErr: "got 4 arguments"},
		{args: "0 1m", wantErr: `"0" is not a positive number of requests`},
		{args: "many 1m", wantErr: `"many" is not a positive number of requests`},
		{args: "5 fortnight", wantErr: `"fortnight" is not a duration`},
		{args: "5 -1m", wantErr: `window "-1m" must be positive`},
		{args: "{env.N} 1m", wantErr: `"{env.N}": a runtime placeholder cannot give a number here; use {$VAR}`},
	}
	for _, tc := range tests {
		n, window, off, err := ParseArgs(strings.Fields(tc.args), tc.offOK)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseArgs(%q) = %v; want error %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || n != tc.n || window != tc.window || off != tc.off {
			t.Errorf("ParseArgs(%q) = %d, %v, %v, %v; want %d, %v, %v", tc.args, n, window, off, err, tc.n, tc.window, tc.off)
		}
	}
}
