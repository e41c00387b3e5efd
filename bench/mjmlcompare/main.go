// Command mjmlcompare times render.HTML against MJML on the same designs in
// one run: for each design it exports MJML (bench/internal/mjml), then
// times our decode+render in this process and has one warm Node process
// (bench/mjml, mjml from npm) render the exported MJML, and prints both
// per-render times and their ratio. The timing goes in rounds: in each,
// every design is timed with ours and then with mjml, so that a change in
// the machine's load falls on both sides alike.
//
// Both sides start from their own source text, held in memory as their
// language's string: ours from the design JSON (design.DecodeString +
// render.HTML), MJML's from the MJML text (mjml2html parses and renders). Times are means over many warm renders; ours run
// with GOMAXPROCS=1.
//
// Both sides should get the same CPU. Ours is one goroutine on one P; Node
// runs mjml's JavaScript on one thread but V8's collector and compiler
// helpers on others, so on a machine with idle cores Node gets more than
// one. run.sh therefore runs this command under taskset on one CPU (the
// last; C_CPU picks another), which Node inherits, and the table's header
// says which CPUs the run was allowed.
// Each side's process CPU time (all threads) is reported as well, and a
// ratio of CPU times beside the ratio of wall times.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/designbridge/caddy-designbridge/bench/internal/mjml"
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

// mjmlStats are mjml's figures for one design.
type mjmlStats struct {
	N                       int
	MeanMs, MedianMs, MinMs float64
	HTMLBytes               int
	Errors                  int
	FirstError              string
}

type row struct {
	name                  string
	jsonBytes, mjmlBytes  int
	ourHTMLBytes          int
	mjmlFile              string
	ours                  ourTimes
	mjmlTimes             []float64 // ms, every timed render over the rounds
	mjmlCPUMs             float64   // Node's CPU time over those renders, all threads
	ourN                  int
	ourTotal, ourRender   time.Duration // per render: decode+render, render only
	ourCPU                time.Duration // per decode+render, this process's CPU time
	mjml                  mjmlStats
	mjmlCPU               float64 // ms per render
	ratioMean, ratioFloor float64
	ratioCPU              float64
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mjmlcompare:", err)
		os.Exit(1)
	}
}

func run() error {
	corpus := flag.String("corpus", os.Getenv("DESIGN_CORPUS"), "directory of the design JSON files (default $DESIGN_CORPUS)")
	designs := flag.String("designs", strings.Join(defaultDesigns, ","), "comma-separated design files in -corpus")
	nodeDir := flag.String("node-dir", "bench/mjml", "directory of render.js (with node_modules)")
	outDir := flag.String("out", "", "where to write the exported .mjml files (default: a temporary directory)")
	n := flag.Int("n", 50, "MJML renders per design (after warm-up), over all rounds")
	warmup := flag.Int("warmup", 10, "unmeasured MJML renders per design")
	goTime := flag.Duration("go-time", time.Second, "time spent measuring our renderer per design, over all rounds")
	rounds := flag.Int("rounds", 5, "rounds: in each, every design is timed with ours, then with mjml, so that both see the same machine load")
	settle := flag.Duration("settle", 200*time.Millisecond, "pause before each side's turn, for the other's background work to finish")
	maxSeconds := flag.Float64("max-seconds", 20, "bound on MJML measuring time per design")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	flag.Parse()

	if *n < 1 || *n > 10_000 || *warmup < 0 || *warmup > 1000 || *goTime <= 0 || *goTime > 30*time.Second ||
		*rounds < 1 || *rounds > 100 || *rounds > *n || *maxSeconds <= 0 {
		return errors.New("flags out of range (-n 1..10000, -warmup 0..1000, -go-time (0,30s], -rounds 1..min(100,n), -max-seconds > 0)")
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
	for _, name := range strings.Split(*designs, ",") {
		name = strings.TrimSpace(name)
		data, err := os.ReadFile(filepath.Join(*corpus, name))
		if err != nil {
			return err
		}
		r, err := prepare(name, data, dir)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}

	node, err := startNode(*nodeDir)
	if err != nil {
		return err
	}
	defer node.close()
	for _, r := range rows {
		if err := r.ours.warmUp(); err != nil {
			return err
		}
		if _, _, err := node.render(r, 0, *warmup, *maxSeconds); err != nil {
			return err
		}
	}
	// Rounds: the machine's load drifts (more so on a shared VM), and
	// timing all of ours and then all of mjml's would let the drift fall
	// on one side only.
	for round := range *rounds {
		for _, r := range rows {
			// Each side is timed alone: Node's and Go's background work
			// (collectors, compiler threads) from the other side's turn
			// settles first.
			time.Sleep(*settle)
			if err := r.ours.measure(*goTime / time.Duration(*rounds)); err != nil {
				return err
			}
			runtime.GC()
			time.Sleep(*settle)
			// The renders left, spread over the rounds left.
			count := (*n - len(r.mjmlTimes) + *rounds - round - 1) / (*rounds - round)
			times, cpuMs, err := node.render(r, count, 0, *maxSeconds/float64(*rounds))
			if err != nil {
				return err
			}
			r.mjmlTimes = append(r.mjmlTimes, times...)
			r.mjmlCPUMs += cpuMs
		}
	}
	for _, r := range rows {
		r.finish()
	}
	cpus := allowedCPUs()
	printTable(os.Stdout, rows, cpus)
	if *jsonOut != "" {
		if err := writeJSON(*jsonOut, rows, cpus); err != nil {
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

// prepare decodes and renders a design once, writes its MJML export to dir
// and sets up the timing of ours.
func prepare(name string, data []byte, dir string) (*row, error) {
	dsg, err := design.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	mj, err := mjml.Export(dsg)
	if err != nil {
		return nil, fmt.Errorf("%s: MJML: %w", name, err)
	}
	out, err := render.HTML(dsg)
	if err != nil {
		return nil, fmt.Errorf("%s: HTML: %w", name, err)
	}
	file := filepath.Join(dir, strings.TrimSuffix(name, ".json")+".mjml")
	if err := os.WriteFile(file, mj, 0o644); err != nil {
		return nil, err
	}
	r := &row{name: name, jsonBytes: len(data), mjmlBytes: len(mj), ourHTMLBytes: len(out.Body), mjmlFile: file}
	// As content_service does per request: decode, render, and hand the
	// output's buffer back once it is written. The JSON is a string, as
	// the MJML is to mjml2html (from bytes, Decode copies them first: B's
	// DecodeRender against DecodeRenderString).
	src := string(data)
	r.ours.full = func() error {
		x, err := design.DecodeString(src)
		if err != nil {
			return err
		}
		out, err := render.HTML(x)
		out.Release()
		return err
	}
	r.ours.renderOnly = func() error {
		out, err := render.HTML(dsg)
		out.Release()
		return err
	}
	return r, nil
}

// ourTimes accumulates the timing of our decode+render (and of render
// alone) over the rounds.
type ourTimes struct {
	full, renderOnly func() error
	fullTime         time.Duration
	fullCPU          time.Duration
	fullN            int
	renderTime       time.Duration
	renderN          int
}

func (o *ourTimes) warmUp() error {
	for range 10 {
		if err := o.full(); err != nil {
			return err
		}
	}
	return nil
}

// measure spends about d timing decode+render, then d/2 timing render
// alone. One core (GOMAXPROCS=1), as the targets are stated and as Node
// runs mjml's JavaScript on one thread.
func (o *ourTimes) measure(d time.Duration) error {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// Unmeasured first: caches and the collector's pace are the previous
	// design's (or mjml's) until then.
	if _, _, err := timeLoop(o.full, d/4); err != nil {
		return err
	}
	cpu0 := processCPU()
	t, n, err := timeLoop(o.full, d)
	if err != nil {
		return err
	}
	o.fullCPU += processCPU() - cpu0
	o.fullTime += t
	o.fullN += n
	t, n, err = timeLoop(o.renderOnly, d/2)
	o.renderTime += t
	o.renderN += n
	return err
}

// processCPU is the CPU time this process has used so far, all threads
// (the collector's included), as Node's process.cpuUsage counts it.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// allowedCPUs is the CPUs this process (and Node, which inherits them)
// may run on, as /proc/self/status lists them ("" where unknown).
func allowedCPUs() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// onlineCPUs is the machine's CPUs as the kernel lists them (NumCPU
// counts only the allowed ones).
func onlineCPUs() string {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(data))
}

// timeLoop runs fn until d has passed (at least once, at most a million
// times) and returns the time taken and the number of calls.
func timeLoop(fn func() error, d time.Duration) (time.Duration, int, error) {
	start := time.Now()
	iters := 0
	for iters == 0 || time.Since(start) < d && iters < 1_000_000 {
		if err := fn(); err != nil {
			return 0, 0, err
		}
		iters++
	}
	return time.Since(start), iters, nil
}

// finish turns the accumulated times into the row's figures.
func (r *row) finish() {
	r.ourN = r.ours.fullN
	r.ourTotal = r.ours.fullTime / time.Duration(r.ours.fullN)
	r.ourRender = r.ours.renderTime / time.Duration(r.ours.renderN)
	r.ourCPU = r.ours.fullCPU / time.Duration(r.ours.fullN)
	t := r.mjmlTimes
	r.mjml.N = len(t)
	if len(t) > 0 {
		sorted := append([]float64(nil), t...)
		sort.Float64s(sorted)
		sum := 0.0
		for _, x := range t {
			sum += x
		}
		r.mjml.MeanMs, r.mjml.MedianMs, r.mjml.MinMs = sum/float64(len(t)), sorted[len(t)/2], sorted[0]
		r.ratioMean = r.mjml.MeanMs * 1e6 / float64(r.ourTotal.Nanoseconds())
		r.ratioFloor = r.mjml.MinMs * 1e6 / float64(r.ourTotal.Nanoseconds())
		r.mjmlCPU = r.mjmlCPUMs / float64(len(t))
		if r.ourCPU > 0 {
			r.ratioCPU = r.mjmlCPU * 1e6 / float64(r.ourCPU.Nanoseconds())
		}
	}
}

// nodeProcess is bench/mjml/render.js in -serve mode.
type nodeProcess struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startNode(dir string) (*nodeProcess, error) {
	cmd := exec.Command("node", filepath.Join(dir, "render.js"), "-serve")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("node render.js: %w", err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	return &nodeProcess{cmd: cmd, in: in, out: sc}, nil
}

// nodeAnswer is one line of render.js -serve.
type nodeAnswer struct {
	File       string    `json:"file"`
	TimesMs    []float64 `json:"times_ms"`
	CPUMs      float64   `json:"cpu_ms"`
	HTMLBytes  int       `json:"html_bytes"`
	Errors     int       `json:"errors"`
	FirstError string    `json:"first_error"`
}

// render has Node render r's MJML warmup times unmeasured, then n times,
// within maxSeconds, and returns the n times (ms) and Node's CPU time over
// them (ms).
func (p *nodeProcess) render(r *row, n, warmup int, maxSeconds float64) ([]float64, float64, error) {
	req, err := json.Marshal(map[string]any{"file": r.mjmlFile, "n": n, "warmup": warmup, "max_seconds": maxSeconds})
	if err != nil {
		return nil, 0, err
	}
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		return nil, 0, fmt.Errorf("node render.js: %w", err)
	}
	if !p.out.Scan() {
		return nil, 0, fmt.Errorf("node render.js stopped answering: %v", p.out.Err())
	}
	var a nodeAnswer
	if err := json.Unmarshal(p.out.Bytes(), &a); err != nil {
		return nil, 0, fmt.Errorf("node output %q: %w", p.out.Text(), err)
	}
	r.mjml.HTMLBytes, r.mjml.Errors, r.mjml.FirstError = a.HTMLBytes, a.Errors, a.FirstError
	return a.TimesMs, a.CPUMs, nil
}

func (p *nodeProcess) close() {
	_ = p.in.Close()
	_ = p.cmd.Wait()
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
	OurCPUUs       float64 `json:"our_cpu_us"`
	MJMLN          int     `json:"mjml_n"`
	MJMLMeanMs     float64 `json:"mjml_mean_ms"`
	MJMLMedianMs   float64 `json:"mjml_median_ms"`
	MJMLMinMs      float64 `json:"mjml_min_ms"`
	MJMLErrors     int     `json:"mjml_errors"`
	RatioMean      float64 `json:"ratio_mean"`
	MJMLCPUMs      float64 `json:"mjml_cpu_ms"`
	RatioMJMLFloor float64 `json:"ratio_mjml_min"`
	RatioCPU       float64 `json:"ratio_cpu"`
	CPUs           string  `json:"cpus_allowed"`
}

func writeJSON(file string, rows []*row, cpus string) error {
	out := make([]Result, 0, len(rows))
	for _, r := range rows {
		out = append(out, Result{
			Design:         strings.TrimSuffix(r.name, ".json"),
			JSONBytes:      r.jsonBytes,
			MJMLBytes:      r.mjmlBytes,
			OurHTMLBytes:   r.ourHTMLBytes,
			MJMLHTMLBytes:  r.mjml.HTMLBytes,
			OurN:           r.ourN,
			OurTotalUs:     float64(r.ourTotal.Nanoseconds()) / 1e3,
			OurRenderUs:    float64(r.ourRender.Nanoseconds()) / 1e3,
			OurCPUUs:       float64(r.ourCPU.Nanoseconds()) / 1e3,
			MJMLN:          r.mjml.N,
			MJMLMeanMs:     r.mjml.MeanMs,
			MJMLMedianMs:   r.mjml.MedianMs,
			MJMLMinMs:      r.mjml.MinMs,
			MJMLCPUMs:      r.mjmlCPU,
			MJMLErrors:     r.mjml.Errors,
			RatioMean:      r.ratioMean,
			RatioMJMLFloor: r.ratioFloor,
			RatioCPU:       r.ratioCPU,
			CPUs:           cpus,
		})
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

func printTable(w io.Writer, rows []*row, cpus string) {
	fmt.Fprintln(w, "## C. render.HTML vs MJML (warm, in-process, same designs)")
	if cpus == "" {
		cpus = "unknown"
	}
	fmt.Fprintf(w, "CPUs allowed to both sides: %s (online: %s)\n", cpus, onlineCPUs())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "design\tJSON KB\tMJML KB\tour HTML KB\tmjml HTML KB\tours n\tours decode+render µs\tours render µs\tours CPU µs\tmjml mean ms\tmjml min ms\tmjml CPU ms\tmjml n\tmjml/ours (mean)\tmjml min/ours\tmjml/ours (CPU)\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%d\t%.0fx\t%.0fx\t%.0fx\t\n",
			strings.TrimSuffix(r.name, ".json"),
			float64(r.jsonBytes)/1024, float64(r.mjmlBytes)/1024, float64(r.ourHTMLBytes)/1024, float64(r.mjml.HTMLBytes)/1024, r.ourN,
			float64(r.ourTotal.Nanoseconds())/1e3, float64(r.ourRender.Nanoseconds())/1e3, float64(r.ourCPU.Nanoseconds())/1e3,
			r.mjml.MeanMs, r.mjml.MinMs, r.mjmlCPU, r.mjml.N, r.ratioMean, r.ratioFloor, r.ratioCPU)
	}
	_ = tw.Flush()
}
