package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		wantUs  float64
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7000},
		{"p50 of 1..100", ms(hundred...), 50, 50000},
		{"p99 of 1..100", ms(hundred...), 99, 99000},
		{"max", ms(hundred...), 100, 100000},
		{"p50 of four rounds up", ms(1, 2, 3, 4), 50, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.samples, tt.p); got != tt.wantUs {
				t.Errorf("percentile(%v) = %v µs, want %v", tt.p, got, tt.wantUs)
			}
		})
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		spec    string
		wantErr string
		header  string
	}{
		{spec: "a=http://127.0.0.1:9601/x"},
		{spec: "a=http://localhost:9601/x;Authorization=Bearer t", header: "Bearer t"},
		{spec: "a=http://[::1]:9601/x"},
		{spec: "a=http://10.0.0.1:9601/x", wantErr: "not a loopback"},
		{spec: "a=http://192.168.1.1/x", wantErr: "not a loopback"},
		{spec: "http://127.0.0.1/x", wantErr: "want name=URL"},
		{spec: "a=ftp://127.0.0.1/x", wantErr: "bad URL"},
		{spec: "a=http://127.0.0.1/x;NoValue", wantErr: "want Name=value"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			tg, err := parseTarget(tt.spec, 4)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tg.headers.Get("Authorization"); got != tt.header {
				t.Errorf("Authorization = %q, want %q", got, tt.header)
			}
		})
	}
}

func TestSyntheticDesign(t *testing.T) {
	for _, size := range []int{0, 10, 1000, 10 << 20} {
		b := syntheticDesign(size)
		if size > 200 && len(b) != size {
			t.Errorf("size %d: got %d bytes", size, len(b))
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Errorf("size %d: not JSON: %v", size, err)
		}
		if _, ok := v["page"]; !ok {
			t.Errorf("size %d: no page", size)
		}
	}
}

func TestProcStatusKB(t *testing.T) {
	rss, err := procStatusKB(os.Getpid(), "VmRSS")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if rss <= 0 {
		t.Errorf("VmRSS = %d", rss)
	}
	if _, err := procStatusKB(os.Getpid(), "NoSuchField"); err == nil {
		t.Error("missing field: no error")
	}
}

// TestRun drives the whole tool against a local server: a good target and
// one answering 401, with the JSON written and the failure reported.
func TestRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("<html></html>"))
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	var table strings.Builder
	err := run([]string{
		"-target", "good=" + srv.URL + ";Authorization=Bearer ok",
		"-target", "bad=" + srv.URL,
		"-body-bytes", "1000", "-c", "1,2", "-n", "20", "-d", "5s", "-warmup", "0",
		"-baseline", "good", "-json", out,
	}, &table)
	if err == nil || !strings.Contains(err.Error(), "bad c=1: 20 of 20 requests failed") {
		t.Fatalf("err = %v", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rs []result
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 {
		t.Fatalf("%d results, want 4", len(rs))
	}
	for _, r := range rs {
		switch r.Target {
		case "good":
			if r.Requests != 20 || r.Errors != 0 || r.P50us <= 0 || r.AddedP50us != 0 {
				t.Errorf("good: %+v", r)
			}
		case "bad":
			if r.Errors != 20 {
				t.Errorf("bad: %+v", r)
			}
		}
	}
	if !strings.Contains(table.String(), "added p50 ms") {
		t.Errorf("table without added latency:\n%s", table.String())
	}
}

// TestBodies: by default every body differs from every other, keeps the
// design's size plus the counter and stays valid JSON; -same-body sends
// the design itself each time.
func TestBodies(t *testing.T) {
	design := syntheticDesign(200)
	b := &bodies{design: design}
	seen := map[string]bool{}
	for w := 0; w < 4; w++ {
		buf := b.buffer()
		for i := 0; i < 256; i++ {
			got := b.next(buf)
			if len(got) != len(design)+suffixLen || !bytes.HasPrefix(got, design) || !json.Valid(got) {
				t.Fatalf("body %q is not the design followed by JSON whitespace", got)
			}
			if seen[string(got)] {
				t.Fatalf("body %q sent twice", got[len(design):])
			}
			seen[string(got)] = true
		}
	}
	same := &bodies{design: design, same: true}
	if got := same.next(same.buffer()); !bytes.Equal(got, design) {
		t.Errorf("-same-body sent %q, want the design", got)
	}
}

// TestProcCPUTicks: this process's CPU time is read and grows with work.
func TestProcCPUTicks(t *testing.T) {
	before, err := procCPUTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); {
	}
	after, err := procCPUTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("CPU ticks %d then %d after 200 ms of work", before, after)
	}
}
