// Command mjmlcompare times render.HTML against MJML on the same designs in
// one run: for each design it exports MJML with render.MJML, times our
// decode+render in this process, then has one warm Node process (bench/mjml,
// mjml from npm) render the exported MJML many times, and prints both
// per-render times and their ratio.
//
// Both sides start from their own source text: ours from the design JSON
// (design.Decode + render.HTML), MJML's from the MJML text (mjml2html
// parses and renders). Times are means over many warm renders; ours run
// with GOMAXPROCS=1.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
)

// defaultDesigns are corpus emails from small to the largest, all eras.
var defaultDesigns = []string{
	"testing-environment__bee-template.json",
	"beefree-sdk-csapi-simple-integration__initial-template.json",
	"beefree-sdk-assets-templates__v2-email-BF-newsletter-template.json",
	"bee-to-topol__2020-in-review.json",
	"check-api-spotlight__complex-template.json",
}

// nodeResult is one line of bench/mjml/render.js.
type nodeResult struct {
	File       string  `json:"file"`
	N          int     `json:"n"`
	MeanMs     float64 `json:"mean_ms"`
	MedianMs   float64 `json:"median_ms"`
	MinMs      float64 `json:"min_ms"`
	HTMLBytes  int     `json:"html_bytes"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error"`
}

type row struct {
	name                  string
	jsonBytes, mjmlBytes  int
	ourHTMLBytes          int
	ourN                  int
	ourTotal, ourRender   time.Duration // per render: decode+render, render only
	mjml                  nodeResult
	ratioMean, ratioFloor float64
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mjmlcompare:", err)
		os.Exit(1)
	}
}

func run() error {
	corpus := flag.String("corpus", "../shared/corpus", "directory of the design JSON files")
	designs := flag.String("designs", strings.Join(defaultDesigns, ","), "comma-separated design files in -corpus")
	nodeDir := flag.String("node-dir", "bench/mjml", "directory of render.js (with node_modules)")
	outDir := flag.String("out", "", "where to write the exported .mjml files (default: a temporary directory)")
	n := flag.Int("n", 50, "MJML renders per design (after warm-up)")
	warmup := flag.Int("warmup", 10, "unmeasured MJML renders per design")
	goTime := flag.Duration("go-time", time.Second, "time spent measuring our renderer per design")
	maxSeconds := flag.Float64("max-seconds", 20, "bound on MJML measuring time per design")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	flag.Parse()

	if *n < 1 || *n > 10_000 || *warmup < 0 || *warmup > 1000 || *goTime <= 0 || *goTime > 30*time.Second {
		return errors.New("flags out of range (-n 1..10000, -warmup 0..1000, -go-time (0,30s])")
	}
	dir := *outDir
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	} else {
		tmp, err := os.MkdirTemp("", "mjmlcompare-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}

	var rows []*row
	var mjmlFiles []string
	for _, name := range strings.Split(*designs, ",") {
		name = strings.TrimSpace(name)
		data, err := os.ReadFile(filepath.Join(*corpus, name))
		if err != nil {
			return err
		}
		r, mj, err := measureOurs(name, data, *goTime)
		if err != nil {
			return err
		}
		file := filepath.Join(dir, strings.TrimSuffix(name, ".json")+".mjml")
		if err := os.WriteFile(file, mj, 0o644); err != nil {
			return err
		}
		rows = append(rows, r)
		mjmlFiles = append(mjmlFiles, file)
	}

	results, err := runNode(*nodeDir, *n, *warmup, *maxSeconds, mjmlFiles)
	if err != nil {
		return err
	}
	for i, r := range rows {
		r.mjml = results[i]
		r.ratioMean = r.mjml.MeanMs * 1e6 / float64(r.ourTotal.Nanoseconds())
		r.ratioFloor = r.mjml.MinMs * 1e6 / float64(r.ourTotal.Nanoseconds())
	}
	printTable(os.Stdout, rows)
	if *jsonOut != "" {
		if err := writeJSON(*jsonOut, rows); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if r.mjml.Errors > 0 {
			fmt.Printf("note: mjml reported %d validation error(s) for %s; first: %s\n", r.mjml.Errors, r.name, r.mjml.FirstError)
		}
	}
	return nil
}

// measureOurs times design.Decode+render.HTML (and render.HTML alone) on
// data for about d, after a short warm-up, and returns the MJML export.
func measureOurs(name string, data []byte, d time.Duration) (*row, []byte, error) {
	// One core (GOMAXPROCS=1), as the targets are stated and as Node runs
	// mjml's JavaScript on one thread.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	dsg, err := design.Decode(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	mj, err := render.MJML(dsg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: MJML: %w", name, err)
	}
	out, err := render.HTML(dsg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: HTML: %w", name, err)
	}
	r := &row{name: name, jsonBytes: len(data), mjmlBytes: len(mj), ourHTMLBytes: len(out.Body)}

	// As content_service does per request: decode, render, and hand the
	// output's buffer back once it is written.
	full := func() error {
		x, err := design.Decode(data)
		if err != nil {
			return err
		}
		out, err := render.HTML(x)
		out.Release()
		return err
	}
	renderOnly := func() error {
		out, err := render.HTML(dsg)
		out.Release()
		return err
	}
	var iters int
	if r.ourTotal, iters, err = timeLoop(full, d); err != nil {
		return nil, nil, err
	}
	r.ourN = iters
	if r.ourRender, _, err = timeLoop(renderOnly, d/2); err != nil {
		return nil, nil, err
	}
	return r, mj, nil
}

// timeLoop runs fn (after 10 warm-up calls) until d has passed, at most a
// million times, and returns the mean time per call.
func timeLoop(fn func() error, d time.Duration) (time.Duration, int, error) {
	for range 10 {
		if err := fn(); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now()
	iters := 0
	for time.Since(start) < d && iters < 1_000_000 {
		if err := fn(); err != nil {
			return 0, 0, err
		}
		iters++
	}
	return time.Since(start) / time.Duration(iters), iters, nil
}

func runNode(dir string, n, warmup int, maxSeconds float64, files []string) ([]nodeResult, error) {
	args := []string{filepath.Join(dir, "render.js"), "-n", strconv.Itoa(n), "-warmup", strconv.Itoa(warmup),
		"-max-seconds", strconv.FormatFloat(maxSeconds, 'f', -1, 64)}
	cmd := exec.Command("node", append(args, files...)...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node render.js: %w", err)
	}
	var results []nodeResult
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var r nodeResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("node output %q: %w", sc.Text(), err)
		}
		results = append(results, r)
	}
	if len(results) != len(files) {
		return nil, fmt.Errorf("node rendered %d of %d files", len(results), len(files))
	}
	return results, nil
}

// Result is one design's comparison, as written by -json.
type Result struct {
	Design         string  `json:"design"`
	JSONBytes      int     `json:"json_bytes"`
	MJMLBytes      int     `json:"mjml_bytes"`
	OurHTMLBytes   int     `json:"our_html_bytes"`
	MJMLHTMLBytes  int     `json:"mjml_html_bytes"`
	OurN           int     `json:"our_n"`
	OurTotalUs     float64 `json:"our_decode_render_us"`
	OurRenderUs    float64 `json:"our_render_us"`
	MJMLN          int     `json:"mjml_n"`
	MJMLMeanMs     float64 `json:"mjml_mean_ms"`
	MJMLMedianMs   float64 `json:"mjml_median_ms"`
	MJMLMinMs      float64 `json:"mjml_min_ms"`
	MJMLErrors     int     `json:"mjml_errors"`
	RatioMean      float64 `json:"ratio_mean"`
	RatioMJMLFloor float64 `json:"ratio_mjml_min"`
}

func writeJSON(file string, rows []*row) error {
	out := make([]Result, 0, len(rows))
	for _, r := range rows {
		out = append(out, Result{
			Design: strings.TrimSuffix(r.name, ".json"), JSONBytes: r.jsonBytes, MJMLBytes: r.mjmlBytes,
			OurHTMLBytes: r.ourHTMLBytes, MJMLHTMLBytes: r.mjml.HTMLBytes, OurN: r.ourN,
			OurTotalUs: float64(r.ourTotal.Nanoseconds()) / 1e3, OurRenderUs: float64(r.ourRender.Nanoseconds()) / 1e3,
			MJMLN: r.mjml.N, MJMLMeanMs: r.mjml.MeanMs, MJMLMedianMs: r.mjml.MedianMs, MJMLMinMs: r.mjml.MinMs,
			MJMLErrors: r.mjml.Errors, RatioMean: r.ratioMean, RatioMJMLFloor: r.ratioFloor,
		})
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

func printTable(w io.Writer, rows []*row) {
	fmt.Fprintln(w, "## C. render.HTML vs MJML (warm, in-process, same designs)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "design\tJSON KB\tMJML KB\tour HTML KB\tmjml HTML KB\tours n\tours decode+render µs\tours render µs\tmjml mean ms\tmjml min ms\tmjml n\tmjml/ours (mean)\tmjml min/ours\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%d\t%.0fx\t%.0fx\t\n",
			strings.TrimSuffix(r.name, ".json"),
			float64(r.jsonBytes)/1024, float64(r.mjmlBytes)/1024, float64(r.ourHTMLBytes)/1024, float64(r.mjml.HTMLBytes)/1024, r.ourN,
			float64(r.ourTotal.Nanoseconds())/1e3, float64(r.ourRender.Nanoseconds())/1e3,
			r.mjml.MeanMs, r.mjml.MinMs, r.mjml.N, r.ratioMean, r.ratioFloor)
	}
	_ = tw.Flush()
}
