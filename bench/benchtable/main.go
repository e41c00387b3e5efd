// Command benchtable reads `go test -bench -benchmem` output of
// bench/render_bench_test.go on stdin and prints, per corpus template, the
// time and allocations of json.Unmarshal, design.Decode, render.HTML and
// both together, with the ratios to json.Unmarshal that target B is about.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// The sub-benchmarks of BenchmarkCorpus (render_bench_test.go), by the
// column they fill: BenchmarkCorpus/<template>/<kind>.
const (
	benchJSON         = "JSONUnmarshal"
	benchDecode       = "Decode"
	benchRender       = "Render"
	benchDecodeRender = "DecodeRender"
)

type measure struct {
	NsOp     float64 `json:"ns_op"`
	BytesOp  float64 `json:"bytes_op"`
	AllocsOp float64 `json:"allocs_op"`
}

// Template is one corpus template's figures, as written by -json.
type Template struct {
	Name             string  `json:"name"`
	JSON             measure `json:"json_unmarshal"`
	Decode           measure `json:"decode"`
	Render           measure `json:"render"`
	DecodeRender     measure `json:"decode_render"`
	RenderVsJSON     float64 `json:"render_vs_json"`
	DecodeRenderVsJS float64 `json:"decode_render_vs_json"`
}

func main() {
	jsonOut := flag.String("json", "", "also write the table as JSON to this file")
	flag.Parse()
	ts, err := parse(os.Stdin)
	if err == nil && len(ts) == 0 {
		err = errors.New("no benchmark lines on stdin")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	printTable(os.Stdout, ts)
	if *jsonOut != "" {
		data, err := json.MarshalIndent(ts, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonOut, append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
	}
}

// parse reads lines such as
//
//	BenchmarkCorpus/name/Render  	   1234	  56789 ns/op	 12.3 MB/s	 4567 B/op	 89 allocs/op
//
// (with -cpu N other than 1, go test appends "-N" to the name).
func parse(r io.Reader) ([]*Template, error) {
	byName := map[string]*Template{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "BenchmarkCorpus/") {
			continue
		}
		full := strings.TrimPrefix(fields[0], "BenchmarkCorpus/")
		cut := strings.LastIndexByte(full, '/')
		if cut < 0 {
			continue
		}
		name, bench := full[:cut], full[cut+1:]
		// The kinds never end in digits: a "-N" there is the -cpu suffix.
		if i := strings.LastIndexByte(bench, '-'); i > 0 {
			if _, err := strconv.Atoi(bench[i+1:]); err == nil {
				bench = bench[:i]
			}
		}
		var m measure
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", sc.Text(), err)
			}
			switch fields[i+1] {
			case "ns/op":
				m.NsOp = v
			case "B/op":
				m.BytesOp = v
			case "allocs/op":
				m.AllocsOp = v
			}
		}
		t := byName[name]
		if t == nil {
			t = &Template{Name: name}
			byName[name] = t
		}
		switch bench {
		case benchJSON:
			t.JSON = m
		case benchDecode:
			t.Decode = m
		case benchRender:
			t.Render = m
		case benchDecodeRender:
			t.DecodeRender = m
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]*Template, 0, len(byName))
	for _, t := range byName {
		if t.JSON.NsOp > 0 {
			t.RenderVsJSON = t.Render.NsOp / t.JSON.NsOp
			t.DecodeRenderVsJS = t.DecodeRender.NsOp / t.JSON.NsOp
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func printTable(w io.Writer, ts []*Template) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "template\tjson.Unmarshal µs\tDecode µs\tRender µs\tDecode+Render µs\tRender/json\t(Decode+Render)/json\tjson B/op\tD+R B/op\tjson allocs\tD+R allocs\t")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%.0f\t%.0f\t%.0f\t%.0f\t\n", t.Name,
			t.JSON.NsOp/1e3, t.Decode.NsOp/1e3, t.Render.NsOp/1e3, t.DecodeRender.NsOp/1e3,
			t.RenderVsJSON, t.DecodeRenderVsJS,
			t.JSON.BytesOp, t.DecodeRender.BytesOp, t.JSON.AllocsOp, t.DecodeRender.AllocsOp)
	}
	_ = tw.Flush()
}
