// Command summary reads the result files of one bench/run.sh run and prints
// the targets table: what was measured, the target, and whether it was met.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// loadResult mirrors the fields of bench/load's -json output used here.
type loadResult struct {
	Target      string  `json:"target"`
	Concurrency int     `json:"concurrency"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	RPS         float64 `json:"rps"`
	MedianRPS   float64 `json:"median_rps"`
	P50us       float64 `json:"p50_us"`
	P99us       float64 `json:"p99_us"`
	AddedP50us  float64 `json:"added_p50_us"`
	AddedP99us  float64 `json:"added_p99_us"`
	RSSBeforeKB int     `json:"rss_before_kb"`
	RSSAfterKB  int     `json:"rss_after_kb"`
	HWMAfterKB  int     `json:"hwm_after_kb"`
	CPUus       float64 `json:"cpu_us_per_request"`
}

// mjmlResult mirrors bench/mjmlcompare's -json output.
type mjmlResult struct {
	Design     string  `json:"design"`
	OurTotalUs float64 `json:"our_decode_render_us"`
	Engines    map[string]struct {
		MeanMs    float64 `json:"mean_ms"`
		Errors    int     `json:"errors"`
		RatioMean float64 `json:"ratio_mean"`
		RatioCPU  float64 `json:"ratio_cpu"`
	} `json:"engines"`
	CPUs string `json:"cpus_allowed"`
}

// benchTemplate mirrors bench/benchtable's -json output.
type benchTemplate struct {
	Name             string  `json:"name"`
	Render           nsOp    `json:"render"`
	DecodeRender     nsOp    `json:"decode_render"`
	RenderVsJSON     float64 `json:"render_vs_json"`
	DecodeRenderVsJS float64 `json:"decode_render_vs_json"`
}

type nsOp struct {
	NsOp float64 `json:"ns_op"`
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// wrkResult is what is read from wrk's text output.
type wrkResult struct {
	Connections int
	RPS         float64
	P50, P99    string
	Non2xx      int
}

const mib = 1024.0

func main() {
	dir := flag.String("dir", "", "directory with the result files of one run")
	largest := flag.String("largest-email", "check-api-spotlight__complex-template", "the corpus's largest email (target B)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "summary: -dir is required")
		os.Exit(2)
	}
	if err := run(*dir, *largest, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(1)
	}
}

func run(dir, largestEmail string, w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "check\tmeasured\ttarget\tverdict")
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}

	if rs, err := readLoad(filepath.Join(dir, "a-forward.json")); err == nil {
		byKey := map[string]loadResult{}
		var concs []int
		for _, r := range rs {
			byKey[r.Target+"/"+strconv.Itoa(r.Concurrency)] = r
			if r.Target == "bridge" {
				concs = append(concs, r.Concurrency)
			}
		}
		sort.Ints(concs)
		for _, c := range concs {
			k := "/" + strconv.Itoa(c)
			b, p := byKey["bridge"+k], byKey["proxy"+k]
			if p.CPUus > 0 {
				ratio := b.CPUus / p.CPUus
				fmt.Fprintf(tw, "A c=%d design_bridge vs reverse_proxy, CPU per request\t%.0f vs %.0f µs = %.2fx\t<= 1.10x\t%s\n", c, b.CPUus, p.CPUus, ratio, verdict(ratio <= 1.1))
			}
			if p.MedianRPS > 0 {
				fmt.Fprintf(tw, "A c=%d design_bridge vs reverse_proxy, req/s\t%.0f vs %.0f = %.2fx\t-\tinfo\n", c, b.MedianRPS, p.MedianRPS, b.MedianRPS/p.MedianRPS)
			}
			ex := byKey["express-json"+k]
			if raw := byKey["express-raw"+k]; raw.MedianRPS > ex.MedianRPS {
				ex = raw
			}
			if ex.MedianRPS > 0 {
				ratio := b.MedianRPS / ex.MedianRPS
				fmt.Fprintf(tw, "A c=%d design_bridge vs Express (faster mode: %s)\t%.0f vs %.0f req/s = %.1fx\t>= 5x\t%s\n", c, ex.Target, b.MedianRPS, ex.MedianRPS, ratio, verdict(ratio >= 5))
			}
			fmt.Fprintf(tw, "A c=%d design_bridge added latency\tp50 %+.3f ms, p99 %+.3f ms (reverse_proxy p50 %+.3f, p99 %+.3f)\t-\tinfo\n", c, b.AddedP50us/1e3, b.AddedP99us/1e3, p.AddedP50us/1e3, p.AddedP99us/1e3)
		}
	} else {
		fmt.Fprintf(tw, "A forwarding\t(no result: %v)\t\t-\n", err)
	}

	for _, name := range []string{"bridge", "proxy"} {
		rs, err := readLoad(filepath.Join(dir, "a-memory-"+name+".json"))
		if err != nil {
			fmt.Fprintf(tw, "A memory %s\t(no result: %v)\t\t-\n", name, err)
			continue
		}
		if len(rs) == 0 {
			continue
		}
		start := rs[0].RSSBeforeKB
		last := rs[len(rs)-1]
		var parts []string
		total := 0
		for _, r := range rs {
			total += r.Requests
			parts = append(parts, fmt.Sprintf("c=%d: RSS %.1f->%.1f MiB", r.Concurrency, float64(r.RSSBeforeKB)/mib, float64(r.RSSAfterKB)/mib))
		}
		peakGrowth := float64(last.HWMAfterKB-start) / mib
		flat := peakGrowth < 10 && float64(last.RSSAfterKB-start)/mib < 10
		label := map[string]string{"bridge": "design_bridge", "proxy": "reverse_proxy"}[name]
		fmt.Fprintf(tw, "A memory, %s, %d x 10 MiB bodies\t%s; peak (VmHWM) %.1f MiB = start %+.1f MiB\tflat: growth < 10 MiB (one body)\t%s\n",
			label, total, strings.Join(parts, "; "), float64(last.HWMAfterKB)/mib, peakGrowth, verdict(flat))
	}

	if data, err := os.ReadFile(filepath.Join(dir, "b-render.json")); err == nil {
		var ts []benchTemplate
		if err := json.Unmarshal(data, &ts); err != nil {
			return err
		}
		if len(ts) > 0 {
			worst, worstFull := ts[0], ts[0]
			var renderRatios, fullRatios []float64
			for _, t := range ts {
				renderRatios = append(renderRatios, t.RenderVsJSON)
				fullRatios = append(fullRatios, t.DecodeRenderVsJS)
				if t.RenderVsJSON > worst.RenderVsJSON {
					worst = t
				}
				if t.DecodeRenderVsJS > worstFull.DecodeRenderVsJS {
					worstFull = t
				}
			}
			fmt.Fprintf(tw, "B render.HTML / json.Unmarshal (%d templates)\tmedian %.2fx, worst %.2fx (%s)\t<= 5x\t%s\n",
				len(ts), median(renderRatios), worst.RenderVsJSON, worst.Name, verdict(worst.RenderVsJSON <= 5))
			fmt.Fprintf(tw, "B (Decode+render.HTML) / json.Unmarshal\tmedian %.2fx, worst %.2fx (%s)\t<= 5x\t%s\n",
				median(fullRatios), worstFull.DecodeRenderVsJS, worstFull.Name, verdict(worstFull.DecodeRenderVsJS <= 5))
			for _, t := range ts {
				if t.Name == largestEmail {
					fmt.Fprintf(tw, "B largest email (%s), -cpu 1\tDecode+render %.3f ms (render %.3f ms)\t< 1 ms\t%s\n",
						t.Name, t.DecodeRender.NsOp/1e6, t.Render.NsOp/1e6, verdict(t.DecodeRender.NsOp < 1e6))
				}
			}
		}
	} else {
		fmt.Fprintf(tw, "B renderer\t(no result: %v)\t\t-\n", err)
	}

	if data, err := os.ReadFile(filepath.Join(dir, "c-mjml.json")); err == nil {
		var rs []mjmlResult
		if err := json.Unmarshal(data, &rs); err != nil {
			return err
		}
		// Every design at least 2x faster than mrml; the median design at
		// least 50x faster than mjml. By CPU time per render: on a busy
		// machine wall times mostly measure waiting for a core.
		var mjmlRatios []float64
		for _, r := range rs {
			if e, ok := r.Engines["mrml"]; ok {
				fmt.Fprintf(tw, "C mrml %s\tCPU time %.2fx (wall %.2fx: ours %.0f µs vs mrml %.0f µs; CPUs %s)\t>= 2x\t%s\n",
					r.Design, e.RatioCPU, e.RatioMean, r.OurTotalUs, e.MeanMs*1e3, r.CPUs, verdict(e.RatioCPU >= 2 && e.Errors == 0))
			}
			if e, ok := r.Engines["mjml"]; ok {
				mjmlRatios = append(mjmlRatios, e.RatioCPU)
			}
		}
		if len(mjmlRatios) > 0 {
			m := median(mjmlRatios)
			fmt.Fprintf(tw, "C mjml, median of %d designs\tCPU time %.1fx (min %.1fx)\t>= 50x\t%s\n",
				len(mjmlRatios), m, slices.Min(mjmlRatios), verdict(m >= 50))
		}
	} else {
		fmt.Fprintf(tw, "C MJML\t(no result: %v)\t\t-\n", err)
	}

	files, _ := filepath.Glob(filepath.Join(dir, "d-wrk-c*.txt"))
	if len(files) == 0 {
		fmt.Fprintf(tw, "D content_service\t(no result)\t\t-\n")
	}
	for _, f := range files {
		r, err := readWrk(f)
		if err != nil {
			fmt.Fprintf(tw, "D content_service %s\t(unreadable: %v)\t\t-\n", filepath.Base(f), err)
			continue
		}
		fmt.Fprintf(tw, "D content_service renders, wrk c=%d\t%.0f req/s (p50 %s, p99 %s, non-2xx %d)\t>= 5000 req/s\t%s\n",
			r.Connections, r.RPS, r.P50, r.P99, r.Non2xx, verdict(r.RPS >= 5000 && r.Non2xx == 0))
	}
	return tw.Flush()
}

func readLoad(file string) ([]loadResult, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var rs []loadResult
	return rs, json.Unmarshal(data, &rs)
}

// readWrk reads the connection count, Requests/sec, the 50% and 99%
// latency lines (--latency) and the non2xx count printed by bench/post.lua.
func readWrk(file string) (wrkResult, error) {
	var r wrkResult
	f, err := os.Open(file)
	if err != nil {
		return r, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 5 && fields[1] == "threads" && fields[4] == "connections":
			// "2 threads and 16 connections"
			r.Connections, _ = strconv.Atoi(fields[3])
		case len(fields) == 2 && fields[0] == "Requests/sec:":
			r.RPS, err = strconv.ParseFloat(fields[1], 64)
			if err != nil {
				return r, err
			}
		case len(fields) == 2 && fields[0] == "50%":
			r.P50 = fields[1]
		case len(fields) == 2 && fields[0] == "99%":
			r.P99 = fields[1]
		case len(fields) >= 1 && strings.HasPrefix(fields[0], "non2xx="):
			r.Non2xx, _ = strconv.Atoi(strings.TrimPrefix(fields[0], "non2xx="))
		}
	}
	if r.RPS == 0 {
		return r, errors.New("no Requests/sec line")
	}
	return r, sc.Err()
}
