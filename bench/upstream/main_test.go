package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	html := fixedHTML(1024)
	if len(html) < 900 || len(html) > 1024 || !strings.HasPrefix(string(html), "<!DOCTYPE html>") {
		t.Fatalf("fixedHTML: %d bytes: %.40q", len(html), html)
	}
	h := newHandler("tok", html)
	tests := []struct {
		name, method, auth string
		want               int
	}{
		{"token", http.MethodPost, "Bearer tok", 200},
		{"no token", http.MethodPost, "", 401},
		{"wrong token", http.MethodPost, "Bearer nope", 401},
		{"no prefix", http.MethodPost, "tok", 401},
		{"GET", http.MethodGet, "Bearer tok", 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/v1/message/html", strings.NewReader(`{"page":{}}`))
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d", rec.Code, tt.want)
			}
			body, _ := io.ReadAll(rec.Body)
			if tt.want == 200 && string(body) != string(html) {
				t.Errorf("body differs")
			}
		})
	}
}

func TestRequireLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:1": true, "localhost:1": true, "[::1]:1": true,
		"0.0.0.0:1": false, ":1": false, "10.1.2.3:1": false,
	} {
		if err := requireLoopback(addr); (err == nil) != ok {
			t.Errorf("requireLoopback(%q) = %v", addr, err)
		}
	}
}
