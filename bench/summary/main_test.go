package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const wrkOutput = `Running 10s test @ http://127.0.0.1:9610/v1/message/html
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    10.21ms    3.10ms  40.00ms   80.00%
  Latency Distribution
     50%    9.80ms
     75%   11.00ms
     90%   14.00ms
     99%   22.50ms
  60000 requests in 10.00s, 1.50GB read
Requests/sec:   6000.12
Transfer/sec:    153.60MB
non2xx=0 socket_errors=0
`

func TestReadWrk(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "d-wrk-c64.txt")
	if err := os.WriteFile(f, []byte(wrkOutput), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := readWrk(f)
	if err != nil {
		t.Fatal(err)
	}
	want := wrkResult{Connections: 64, RPS: 6000.12, P50: "9.80ms", P99: "22.50ms"}
	if r != want {
		t.Errorf("got %+v, want %+v", r, want)
	}
	if err := os.WriteFile(f, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readWrk(f); err == nil {
		t.Error("no Requests/sec: no error")
	}
}

// TestRun checks the verdicts on a small set of result files.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a-forward.json", `[
		{"target":"bridge","concurrency":1,"median_rps":950,"cpu_us_per_request":300},
		{"target":"proxy","concurrency":1,"median_rps":1000,"cpu_us_per_request":250},
		{"target":"express-json","concurrency":1,"median_rps":100},
		{"target":"express-raw","concurrency":1,"median_rps":200}]`)
	write("a-memory-bridge.json", `[{"target":"bridge","concurrency":1,"requests":50,"rss_before_kb":51200,"rss_after_kb":52224,"hwm_after_kb":53248}]`)
	write("b-render.json", `[{"name":"big","render":{"ns_op":900000},"decode_render":{"ns_op":1200000},"render_vs_json":2,"decode_render_vs_json":6}]`)
	write("c-mjml.json", `[
		{"design":"x","our_decode_render_us":100,"engines":{"mjml":{"mean_ms":10,"ratio_mean":100,"ratio_cpu":100},"mrml":{"mean_ms":0.3,"ratio_mean":3,"ratio_cpu":3}}},
		{"design":"y","our_decode_render_us":100,"engines":{"mjml":{"mean_ms":1,"ratio_mean":10,"ratio_cpu":10},"mrml":{"mean_ms":0.15,"ratio_mean":2.5,"ratio_cpu":1.5}}},
		{"design":"z","our_decode_render_us":100,"engines":{"mjml":{"mean_ms":2,"ratio_mean":20,"ratio_cpu":20},"mrml":{"mean_ms":0.3,"ratio_mean":3,"ratio_cpu":3,"errors":1}}}]`)
	write("d-wrk-c64.txt", wrkOutput)
	var out strings.Builder
	if err := run(dir, "big", &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, line := range []string{
		"A c=1 design_bridge vs reverse_proxy, CPU per request  300 vs 250 µs = 1.20x  <= 1.10x",
		"A c=1 design_bridge vs reverse_proxy, req/s  950 vs 1000 = 0.95x",
		"A c=1 design_bridge vs Express (faster mode: express-raw)  950 vs 200 req/s = 4.8x",
		"peak (VmHWM) 52.0 MiB = start +2.0 MiB",
		"B render.HTML / json.Unmarshal (1 templates)",
		"B largest email (big), -cpu 1",
		"C mrml x  CPU time 3.00x (wall 3.00x: ours 100 µs vs mrml 300 µs",
		"C mjml, median of 3 designs  CPU time 20.0x (min 10.0x)",
		"D content_service renders, wrk c=64",
	} {
		if !strings.Contains(collapse(got), collapse(line)) {
			t.Errorf("missing %q in\n%s", line, got)
		}
	}
	verdicts := map[string]string{
		"A c=1 design_bridge vs reverse_proxy, CPU":   "MISSED",
		"A c=1 design_bridge vs reverse_proxy, req/s": "info",
		"A c=1 design_bridge vs Express":              "MISSED",
		"A memory, design_bridge":                     "met",
		"B render.HTML / json.Unmarshal":              "met",
		"B (Decode+render.HTML)":                      "MISSED",
		"B largest email":                             "MISSED",
		"C mrml x":                                    "met",
		"C mrml y":                                    "MISSED",
		"C mrml z":                                    "MISSED",
		"C mjml, median":                              "MISSED",
		"D content_service":                           "met",
	}
	for prefix, want := range verdicts {
		found := false
		for _, l := range strings.Split(got, "\n") {
			if strings.HasPrefix(l, prefix) {
				found = true
				if f := strings.Fields(l); f[len(f)-1] != want {
					t.Errorf("%s: verdict %q, want %q", prefix, f[len(f)-1], want)
				}
			}
		}
		if !found {
			t.Errorf("no line starting %q", prefix)
		}
	}
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
