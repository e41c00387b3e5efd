// Command mjmlcompare times render.HTML against MJML renderers on the same
// designs in one run: for each design it exports MJML (bench/internal/mjml),
// then times our decode+render in this process and has one warm Node
// process per engine (bench/mjml/render.js: mjml 5.4.1, and mrml 1.6.1, the
// Rust MJML renderer as WebAssembly) render the exported MJML, and prints
// the per-render times and the ratios per design, then the ratios' median.
// The timing goes in rounds: in each, every design is timed with ours and
// then with each engine, so that a change in the machine's load falls on
// every side alike.
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
	"text/tabwriter"
	"time"

	"github.com/designbridge/caddy-designbridge/bench/internal/mjml"
	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/proccpu"
)

// defaultDesigns (-designs five) are corpus emails from small to the largest, all eras.
var defaultDesigns = []string{
	"testing-environment__bee-template.json",
	"beefree-sdk-csapi-simple-integration__initial-template.json",
	"beefree-sdk-assets-templates__v2-email-BF-newsletter-template.json",
	"bee-to-topol__2020-in-review.json",
	"check-api-spotlight__complex-template.json",
}

// engineStats are one MJML engine's figures for one design.
type engineStats struct {
	N                       int
	MeanMs, MedianMs, MinMs float64
	CPUMs                   float64 // per render, the Node process's CPU time (all threads)
	HTMLBytes               int
	Errors                  int
	FirstError              string
	RatioMean, RatioFloor   float64 // engine's mean and min over our decode+render
	RatioCPU                float64 // engine's CPU time over ours
}

// engineTimes accumulates one engine's timing of one design over the rounds.
type engineTimes struct {
	times []float64 // ms, every timed render
	cpuMs float64   // Node's CPU time over those renders, all threads
	stats engineStats
}

type row struct {
	name                 string
	jsonBytes, mjmlBytes int
	ourHTMLBytes         int
	mjmlFile             string
	ours                 ourTimes
	ourN                 int
	ourTotal, ourRender  time.Duration  // per render: decode+render, render only
	ourCPU               time.Duration  // per decode+render, this process's CPU time
	engines              []*engineTimes // as the -engines flag lists them
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mjmlcompare:", err)
		os.Exit(1)
	}
}

func run() error {
	corpus := flag.String("corpus", os.Getenv("DESIGN_CORPUS"), "directory of the design JSON files (default $DESIGN_CORPUS)")
	designs := flag.String("designs", "all", `comma-separated design files in -corpus, "all" for every *.json there, "five" for five emails from small to the largest`)
	nodeDir := flag.String("node-dir", "bench/mjml", "directory of render.js (with node_modules)")
	engineList := flag.String("engines", "mrml,mjml", "comma-separated MJML engines render.js runs (mjml, mrml), each in its own Node process")
	outDir := flag.String("out", "", "where to write the exported .mjml files (default: a temporary directory)")
	n := flag.Int("n", 50, "renders per design and engine (after warm-up), over all rounds")
	warmup := flag.Int("warmup", 10, "unmeasured renders per design and engine")
	goTime := flag.Duration("go-time", time.Second, "time spent measuring our renderer per design, over all rounds")
	rounds := flag.Int("rounds", 5, "rounds: in each, every design is timed with ours, then with each engine, so that all see the same machine load")
	settle := flag.Duration("settle", 200*time.Millisecond, "pause before each side's turn, for the other's background work to finish")
	maxSeconds := flag.Float64("max-seconds", 20, "bound on each engine's measuring time per design")
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

	names, err := designFiles(*corpus, *designs)
	if err != nil {
		return err
	}
	var rows []*row
	for _, name := range names {
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

	var engines []string
	var nodes []*nodeProcess
	defer func() {
		for _, p := range nodes {
			p.close()
		}
	}()
	for _, e := range strings.Split(*engineList, ",") {
		e = strings.TrimSpace(e)
		p, err := startNode(*nodeDir, e)
		if err != nil {
			return err
		}
		engines, nodes = append(engines, e), append(nodes, p)
	}
	for _, r := range rows {
		if err := r.ours.warmUp(); err != nil {
			return err
		}
		for _, p := range nodes {
			a, err := p.render(r.mjmlFile, 0, *warmup, *maxSeconds)
			if err != nil {
				return err
			}
			r.engines = append(r.engines, &engineTimes{stats: engineStats{HTMLBytes: a.HTMLBytes, Errors: a.Errors, FirstError: a.FirstError}})
		}
	}
	// Rounds: the machine's load drifts (more so on a shared VM), and
	// timing all of ours and then all of an engine's would let the drift
	// fall on one side only.
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
			for i, p := range nodes {
				time.Sleep(*settle)
				e := r.engines[i]
				// The renders left, spread over the rounds left.
				count := (*n - len(e.times) + *rounds - round - 1) / (*rounds - round)
				a, err := p.render(r.mjmlFile, count, 0, *maxSeconds/float64(*rounds))
				if err != nil {
					return err
				}
				e.times = append(e.times, a.TimesMs...)
				e.cpuMs += a.CPUMs
			}
		}
	}
	for _, r := range rows {
		r.finish()
	}
	cpus := allowedCPUs()
	printTable(os.Stdout, rows, engines, cpus)
	if *jsonOut != "" {
		if err := writeJSON(*jsonOut, rows, engines, cpus); err != nil {
			return err
		}
	}
	for _, r := range rows {
		for i, e := range r.engines {
			if e.stats.Errors > 0 {
				fmt.Printf("note: %s reported %d error(s) for %s; first: %s\n", engines[i], e.stats.Errors, r.name, e.stats.FirstError)
			}
		}
	}
	return nil
}

// designFiles resolves the -designs flag to file names in dir.
func designFiles(dir, list string) ([]string, error) {
	switch list {
	case "five":
		return defaultDesigns, nil
	case "all":
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("no *.json designs in %q (-corpus or DESIGN_CORPUS)", dir)
		}
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = filepath.Base(f)
		}
		return names, nil
	}
	var names []string
	for _, name := range strings.Split(list, ",") {
		names = append(names, strings.TrimSpace(name))
	}
	return names, nil
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
	// design's tree and the output's buffer back once the answer is
	// written. The JSON is a string, as the MJML is to mjml2html.
	src := string(data)
	r.ours.full = func() error {
		x, err := design.DecodeString(src)
		if err != nil {
			return err
		}
		out, err := render.HTML(x)
		out.Release()
		x.Release()
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
	cpu0 := proccpu.Used()
	t, n, err := timeLoop(o.full, d)
	if err != nil {
		return err
	}
	o.fullCPU += proccpu.Used() - cpu0
	o.fullTime += t
	o.fullN += n
	t, n, err = timeLoop(o.renderOnly, d/2)
	o.renderTime += t
	o.renderN += n
	return err
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
	ours := float64(r.ourTotal.Nanoseconds()) / 1e6 // ms
	for _, e := range r.engines {
		t, st := e.times, &e.stats
		st.N = len(t)
		if len(t) == 0 {
			continue
		}
		sorted := append([]float64(nil), t...)
		sort.Float64s(sorted)
		sum := 0.0
		for _, x := range t {
			sum += x
		}
		st.MeanMs, st.MedianMs, st.MinMs = sum/float64(len(t)), sorted[len(t)/2], sorted[0]
		st.RatioMean, st.RatioFloor = st.MeanMs/ours, st.MinMs/ours
		st.CPUMs = e.cpuMs / float64(len(t))
		if r.ourCPU > 0 {
			st.RatioCPU = st.CPUMs * 1e6 / float64(r.ourCPU.Nanoseconds())
		}
	}
}

// nodeProcess is bench/mjml/render.js in -serve mode with one engine.
type nodeProcess struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startNode(dir, engine string) (*nodeProcess, error) {
	cmd := exec.Command("node", filepath.Join(dir, "render.js"), "-engine", engine, "-serve")
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

// render has Node render file warmup times unmeasured, then n times,
// within maxSeconds, and returns the n times (ms), Node's CPU time over
// them (ms) and what the engine made of the file.
func (p *nodeProcess) render(file string, n, warmup int, maxSeconds float64) (nodeAnswer, error) {
	var a nodeAnswer
	req, err := json.Marshal(map[string]any{"file": file, "n": n, "warmup": warmup, "max_seconds": maxSeconds})
	if err != nil {
		return a, err
	}
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		return a, fmt.Errorf("node render.js: %w", err)
	}
	if !p.out.Scan() {
		return a, fmt.Errorf("node render.js stopped answering: %v", p.out.Err())
	}
	if err := json.Unmarshal(p.out.Bytes(), &a); err != nil {
		return a, fmt.Errorf("node output %q: %w", p.out.Text(), err)
	}
	return a, nil
}

func (p *nodeProcess) close() {
	_ = p.in.Close()
	_ = p.cmd.Wait()
}

// Result is one design's comparison, as written by -json.
type Result struct {
	Design       string                 `json:"design"`
	JSONBytes    int                    `json:"json_bytes"`
	MJMLBytes    int                    `json:"mjml_bytes"`
	OurHTMLBytes int                    `json:"our_html_bytes"`
	OurN         int                    `json:"our_n"`
	OurTotalUs   float64                `json:"our_decode_render_us"`
	OurRenderUs  float64                `json:"our_render_us"`
	OurCPUUs     float64                `json:"our_cpu_us"`
	Engines      map[string]EngineStats `json:"engines"` // by engine name: mjml, mrml
	CPUs         string                 `json:"cpus_allowed"`
}

// EngineStats is one engine's figures for one design in Result.
type EngineStats struct {
	N          int     `json:"n"`
	HTMLBytes  int     `json:"html_bytes"`
	MeanMs     float64 `json:"mean_ms"`
	MedianMs   float64 `json:"median_ms"`
	MinMs      float64 `json:"min_ms"`
	CPUMs      float64 `json:"cpu_ms"`
	Errors     int     `json:"errors"`
	RatioMean  float64 `json:"ratio_mean"` // engine's mean / our decode+render
	RatioFloor float64 `json:"ratio_min"`  // engine's fastest render / our decode+render
	RatioCPU   float64 `json:"ratio_cpu"`  // engine's CPU time / ours
}

func writeJSON(file string, rows []*row, engines []string, cpus string) error {
	out := make([]Result, 0, len(rows))
	for _, r := range rows {
		res := Result{
			Design:       strings.TrimSuffix(r.name, ".json"),
			JSONBytes:    r.jsonBytes,
			MJMLBytes:    r.mjmlBytes,
			OurHTMLBytes: r.ourHTMLBytes,
			OurN:         r.ourN,
			OurTotalUs:   float64(r.ourTotal.Nanoseconds()) / 1e3,
			OurRenderUs:  float64(r.ourRender.Nanoseconds()) / 1e3,
			OurCPUUs:     float64(r.ourCPU.Nanoseconds()) / 1e3,
			Engines:      map[string]EngineStats{},
			CPUs:         cpus,
		}
		for i, e := range r.engines {
			st := e.stats
			res.Engines[engines[i]] = EngineStats{
				N: st.N, HTMLBytes: st.HTMLBytes, MeanMs: st.MeanMs, MedianMs: st.MedianMs, MinMs: st.MinMs,
				CPUMs: st.CPUMs, Errors: st.Errors, RatioMean: st.RatioMean, RatioFloor: st.RatioFloor, RatioCPU: st.RatioCPU,
			}
		}
		out = append(out, res)
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

func printTable(w io.Writer, rows []*row, engines []string, cpus string) {
	fmt.Fprintf(w, "## C. render.HTML vs %s (warm, in-process, same designs)\n", strings.Join(engines, ", "))
	if cpus == "" {
		cpus = "unknown"
	}
	fmt.Fprintf(w, "CPUs allowed to every side: %s (online: %s)\n", cpus, onlineCPUs())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "design\tJSON KB\tMJML KB\tour HTML KB\tours n\tours decode+render µs\tours render µs\tours CPU µs\t"
	for _, e := range engines {
		head += fmt.Sprintf("%[1]s HTML KB\t%[1]s n\t%[1]s mean µs\t%[1]s min µs\t%[1]s CPU µs\t%[1]s/ours (mean)\t%[1]s min/ours\t%[1]s/ours (CPU)\t", e)
	}
	fmt.Fprintln(tw, head)
	ratios := make([][]float64, len(engines))    // wall (mean) time ratios
	cpuRatios := make([][]float64, len(engines)) // CPU time ratios
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%.1f\t%.1f\t%.1f\t%d\t%.0f\t%.0f\t%.0f\t",
			strings.TrimSuffix(r.name, ".json"),
			float64(r.jsonBytes)/1024, float64(r.mjmlBytes)/1024, float64(r.ourHTMLBytes)/1024, r.ourN,
			float64(r.ourTotal.Nanoseconds())/1e3, float64(r.ourRender.Nanoseconds())/1e3, float64(r.ourCPU.Nanoseconds())/1e3)
		for i, e := range r.engines {
			st := e.stats
			line += fmt.Sprintf("%.1f\t%d\t%.0f\t%.0f\t%.0f\t%.2fx\t%.2fx\t%.2fx\t",
				float64(st.HTMLBytes)/1024, st.N, st.MeanMs*1e3, st.MinMs*1e3, st.CPUMs*1e3, st.RatioMean, st.RatioFloor, st.RatioCPU)
			ratios[i] = append(ratios[i], st.RatioMean)
			cpuRatios[i] = append(cpuRatios[i], st.RatioCPU)
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()
	for i, e := range engines {
		for _, r := range []struct {
			what string
			xs   []float64
		}{{"mean wall times", ratios[i]}, {"CPU times", cpuRatios[i]}} {
			xs := r.xs
			sort.Float64s(xs)
			if len(xs) > 0 {
				fmt.Fprintf(w, "%s/ours over %d designs (%s): min %.2fx, median %.2fx, max %.2fx\n",
					e, len(xs), r.what, xs[0], (xs[(len(xs)-1)/2]+xs[len(xs)/2])/2, xs[len(xs)-1])
			}
		}
	}
}
