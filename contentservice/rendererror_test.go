package contentservice

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap/zapcore"

	"github.com/designbridge/caddy-designbridge/internal/browserpool"
)

// TestRenderErrorAnswers: each way a PDF or image render fails is
// answered with its status, code and Retry-After, and logged at the
// error policy's level (refusals DEBUG, 5xx ERROR). Of a page's crashes,
// only one by SIGTRAP (how Chromium ends a renderer that fails to
// allocate) is the memory bound's 413.
func TestRenderErrorAnswers(t *testing.T) {
	s, logs := newTestService(t, func(h *Handler) {
		h.Browser = &BrowserConfig{Timeout: caddy.Duration(7 * time.Second), FilesDir: t.TempDir()}
	})
	defer s.browser.Close()
	crashed := http.StatusRequestEntityTooLarge
	crashedCode, crashedLevel := CodeBodyTooLarge, zapcore.DebugLevel
	crashedDetails := "most likely the document needs more than the 2048 MiB of memory"
	if !browserpool.PageMemoryBounded {
		crashed, crashedCode, crashedLevel = http.StatusInternalServerError, CodeInternal, zapcore.ErrorLevel
		crashedDetails = "request id"
	}
	tests := []struct {
		name         string
		err          error
		status, code int
		details      string
		retryAfter   string
		level        zapcore.Level // of the one log entry
	}{
		{"too many pages", browserpool.ErrTooManyPages, 413, CodeBodyTooLarge, "200 pages", "", zapcore.DebugLevel},
		{"PDF too large", fmt.Errorf("job: %w", browserpool.ErrTooLarge), 413, CodeBodyTooLarge, "128 MiB", "", zapcore.DebugLevel},
		{"page crashed as out of memory", fmt.Errorf("job: %w", &browserpool.PageCrash{Status: "crashed", Code: 5}), crashed, crashedCode, crashedDetails, "", crashedLevel},
		{"page crashed by SIGSEGV", fmt.Errorf("job: %w", &browserpool.PageCrash{Status: "crashed", Code: 11}), 500, CodeInternal, "request id", "", zapcore.ErrorLevel},
		{"page's renderer killed", &browserpool.PageCrash{Status: "killed", Code: 15}, 500, CodeInternal, "request id", "", zapcore.ErrorLevel},
		{"page's renderer exited", &browserpool.PageCrash{Status: "abnormal", Code: 5}, 500, CodeInternal, "request id", "", zapcore.ErrorLevel},
		{"page crashed, no report", &browserpool.PageCrash{}, 500, CodeInternal, "request id", "", zapcore.ErrorLevel},
		{"busy", browserpool.ErrBusy, 503, CodeBusy, "retry after 7 s", "7", zapcore.ErrorLevel},
		{"unloaded", fmt.Errorf("job: %w", browserpool.ErrClosed), 503, CodeBusy, "reloaded", "1", zapcore.ErrorLevel},
		{"timeout", browserpool.ErrTimeout, 504, CodeRenderTimeout, "longer than", "", zapcore.ErrorLevel},
		{"other", errors.New("printing failed"), 500, CodeInternal, "request id", "", zapcore.ErrorLevel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := logs.Len()
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, PathMessagePDF, nil)
			s.renderError(w, r, "req-1", tc.err)
			if w.Code != tc.status || w.Header().Get("Retry-After") != tc.retryAfter {
				t.Fatalf("status %d, Retry-After %q; want %d, %q", w.Code, w.Header().Get("Retry-After"), tc.status, tc.retryAfter)
			}
			if e := exportErrorOf(t, w); e.Code != tc.code || !strings.Contains(e.Details, tc.details) {
				t.Errorf("code %d, details %q; want %d with %q", e.Code, e.Details, tc.code, tc.details)
			}
			if entries := logs.All()[before:]; len(entries) != 1 || entries[0].Level != tc.level {
				t.Errorf("log entries %v, want one at %s", entries, tc.level)
			}
		})
	}
}
