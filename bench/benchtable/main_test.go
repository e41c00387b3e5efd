package main

import (
	"strings"
	"testing"
)

const oneCPU = `goos: linux
BenchmarkCorpus/smart__template-1/JSONUnmarshal         	     100	   1000 ns/op	  20.0 MB/s	  500 B/op	    10 allocs/op
BenchmarkCorpus/smart__template-1/Render                	     100	   3000 ns/op	  20.0 MB/s	  700 B/op	    12 allocs/op
BenchmarkCorpus/smart__template-2/JSONUnmarshal         	     100	   2000 ns/op	  20.0 MB/s	  600 B/op	    11 allocs/op
BenchmarkCorpus/smart__template-2/DecodeRender          	     100	   9000 ns/op	  20.0 MB/s	  800 B/op	    13 allocs/op
PASS
`

func TestParse(t *testing.T) {
	var twoCPU strings.Builder
	for _, line := range strings.Split(oneCPU, "\n") {
		if name, rest, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "Benchmark") {
			line = name + "-2 " + rest
		}
		twoCPU.WriteString(line + "\n")
	}
	for input, text := range map[string]string{"-cpu 1": oneCPU, "-cpu 2": twoCPU.String()} {
		t.Run(input, func(t *testing.T) {
			ts, err := parse(strings.NewReader(text))
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
		})
	}
}

func TestParseBadNumber(t *testing.T) {
	if _, err := parse(strings.NewReader("BenchmarkCorpus/x/Render 1 abc ns/op\n")); err == nil {
		t.Error("no error for a bad number")
	}
}
