package main

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const oneCPU = `goos: linux
BenchmarkJSONUnmarshal/smart__template-1         	     100	   1000 ns/op	  20.0 MB/s	  500 B/op	    10 allocs/op
BenchmarkJSONUnmarshal/smart__template-2         	     100	   2000 ns/op	  20.0 MB/s	  600 B/op	    11 allocs/op
BenchmarkRender/smart__template-1                	     100	   3000 ns/op	  20.0 MB/s	  700 B/op	    12 allocs/op
BenchmarkDecodeRender/smart__template-2          	     100	   9000 ns/op	  20.0 MB/s	  800 B/op	    13 allocs/op
PASS
`
	ts, err := parse(strings.NewReader(oneCPU))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Name != "smart__template-1" || ts[1].Name != "smart__template-2" {
		t.Fatalf("templates: %+v", ts)
	}
	if ts[0].Render.NsOp != 3000 || ts[0].RenderVsJSON != 3 || ts[0].JSON.BytesOp != 500 || ts[0].JSON.AllocsOp != 10 {
		t.Errorf("template-1: %+v", ts[0])
	}
	if ts[1].DecodeRenderVsJS != 4.5 {
		t.Errorf("template-2 ratio %v, want 4.5", ts[1].DecodeRenderVsJS)
	}

	// With -cpu 2 every name carries "-2"; it is dropped.
	var twoCPU strings.Builder
	for _, line := range strings.Split(oneCPU, "\n") {
		if name, rest, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "Benchmark") {
			line = name + "-2 " + rest
		}
		twoCPU.WriteString(line + "\n")
	}
	ts, err = parse(strings.NewReader(twoCPU.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Name != "smart__template-1" || ts[1].Name != "smart__template-2" {
		t.Fatalf("-cpu 2 templates: %+v\n%s", ts, twoCPU.String())
	}
}
