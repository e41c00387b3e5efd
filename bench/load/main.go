// Command load is the closed-loop HTTP load generator of the forwarding
// benchmarks. Each of -c workers sends one POST, reads the whole answer and
// sends the next, for a fixed duration or a fixed count, whichever ends
// first. Latency percentiles come from the sorted samples of every request.
//
// Several targets are measured side by side in one run: for every round,
// every concurrency and every target in turn, so that noise from other work
// on the machine spreads over all of them instead of landing on one. The
// added latency of a target is its percentile minus the baseline target's
// (normally the upstream hit directly) at the same concurrency.
//
// Every request carries a different body unless -same-body is given: the
// design followed by 16 bytes of JSON whitespace that spell a counter, so
// the body stays the same size and valid JSON, but a forwarder that shares
// one upstream call between identical bodies (design_bridge) or answers
// them from a cache gets no help from the load. -same-body measures that
// sharing on purpose.
//
// With -pid, each measurement also reports the process's CPU time (user +
// system, from /proc/PID/stat) per request.
//
// Only loopback targets are accepted, and every run is bounded in count and
// time.
//
// Usage:
//
//	load -target direct=http://127.0.0.1:9601/v1/message/html;Authorization=Bearer\ t \
//	     -target bridge=http://127.0.0.1:9602/v1/message/html \
//	     -body design.json -c 1,16,64 -d 3s -rounds 3 -baseline direct
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// Hard bounds, whatever the flags say.
const (
	maxDuration    = 60 * time.Second // one measurement
	maxRequests    = 2_000_000        // one measurement (bounds the samples kept)
	maxConcurrency = 512
	maxBodyBytes   = 64 << 20
)

type target struct {
	name    string
	url     string
	headers http.Header
	client  *http.Client
}

// result is one (target, concurrency) cell, summed over rounds.
type result struct {
	Target      string  `json:"target"`
	Concurrency int     `json:"concurrency"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	Seconds     float64 `json:"seconds"`
	RPS         float64 `json:"rps"`          // all rounds: requests / seconds
	RoundRPS    []int   `json:"round_rps"`    // each round's own rate
	MedianRPS   float64 `json:"median_rps"`   // median of RoundRPS
	P50us       float64 `json:"p50_us"`       // over every sample of every round
	P90us       float64 `json:"p90_us"`       //
	P99us       float64 `json:"p99_us"`       //
	MaxUs       float64 `json:"max_us"`       //
	AddedP50us  float64 `json:"added_p50_us"` // minus the baseline's, same concurrency
	AddedP99us  float64 `json:"added_p99_us"` //
	RSSBeforeKB int     `json:"rss_before_kb,omitempty"`
	RSSAfterKB  int     `json:"rss_after_kb,omitempty"`
	HWMAfterKB  int     `json:"hwm_after_kb,omitempty"`
	// CPU time (user + system) of -pid per request, in µs.
	CPUusPerRequest float64 `json:"cpu_us_per_request,omitempty"`
	cpuTicks        int64
	samples         []time.Duration
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ", ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	var targetSpecs multiFlag
	fs.Var(&targetSpecs, "target", "name=URL[;Header=value...] (repeatable; measured in the order given)")
	bodyFile := fs.String("body", "", "file sent as the request body")
	bodyBytes := fs.Int("body-bytes", 0, "send a synthetic JSON design of this many bytes instead of -body")
	contentType := fs.String("content-type", "application/json", "request Content-Type")
	concList := fs.String("c", "1,16,64", "comma-separated concurrencies (closed-loop workers)")
	duration := fs.Duration("d", 3*time.Second, "duration of one measurement (per target, concurrency and round)")
	count := fs.Int("n", 0, "stop one measurement after this many requests (0: duration only)")
	warmup := fs.Duration("warmup", 500*time.Millisecond, "unmeasured load before each measurement")
	rounds := fs.Int("rounds", 1, "interleaved rounds")
	baseline := fs.String("baseline", "", "target whose percentiles are subtracted to give added latency")
	sameBody := fs.Bool("same-body", false, "send the same body every time (measures coalescing and caching); by default each body differs")
	pid := fs.Int("pid", 0, "report VmRSS/VmHWM of this process before and after each measurement, and its CPU time per request")
	jsonOut := fs.String("json", "", "also write the results as JSON to this file")
	title := fs.String("title", "", "title printed above the table")
	if err := fs.Parse(args); err != nil {
		return err
	}

	if len(targetSpecs) == 0 {
		return errors.New("at least one -target is required")
	}
	if *duration <= 0 || *duration > maxDuration {
		return fmt.Errorf("-d must be in (0, %s]", maxDuration)
	}
	if *count < 0 || *count > maxRequests {
		return fmt.Errorf("-n must be in [0, %d]", maxRequests)
	}
	if *rounds < 1 || *rounds > 20 {
		return errors.New("-rounds must be in [1, 20]")
	}
	concs, err := parseConcurrencies(*concList)
	if err != nil {
		return err
	}
	design, err := loadBody(*bodyFile, *bodyBytes)
	if err != nil {
		return err
	}
	body := &bodies{design: design, same: *sameBody}
	maxC := concs[len(concs)-1]
	targets := make([]*target, 0, len(targetSpecs))
	for _, spec := range targetSpecs {
		t, err := parseTarget(spec, maxC)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	if *baseline != "" && !hasTarget(targets, *baseline) {
		return fmt.Errorf("-baseline %q is not a target", *baseline)
	}

	cells := map[string]*result{}
	key := func(name string, c int) string { return name + "/" + strconv.Itoa(c) }
	for round := 0; round < *rounds; round++ {
		for _, c := range concs {
			for _, t := range targets {
				r := cells[key(t.name, c)]
				if r == nil {
					r = &result{Target: t.name, Concurrency: c}
					cells[key(t.name, c)] = r
				}
				if *warmup > 0 {
					measure(t, body, *contentType, c, *warmup, 0)
				}
				if *pid > 0 && round == 0 {
					r.RSSBeforeKB, _ = procStatusKB(*pid, "VmRSS")
				}
				cpu0, _ := procCPUTicks(*pid)
				m := measure(t, body, *contentType, c, *duration, *count)
				if *pid > 0 {
					if cpu1, err := procCPUTicks(*pid); err == nil {
						r.cpuTicks += cpu1 - cpu0
					}
					r.RSSAfterKB, _ = procStatusKB(*pid, "VmRSS")
					r.HWMAfterKB, _ = procStatusKB(*pid, "VmHWM")
				}
				r.add(m)
				t.client.CloseIdleConnections()
			}
		}
	}

	results := make([]*result, 0, len(cells))
	for _, c := range concs {
		for _, t := range targets {
			r := cells[key(t.name, c)]
			r.finish()
			results = append(results, r)
		}
	}
	if *baseline != "" {
		for _, r := range results {
			b := cells[key(*baseline, r.Concurrency)]
			r.AddedP50us = r.P50us - b.P50us
			r.AddedP99us = r.P99us - b.P99us
		}
	}

	printTable(stdout, *title, results, *baseline, *pid > 0)
	if *jsonOut != "" {
		data, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	for _, r := range results {
		if r.Errors > 0 {
			return fmt.Errorf("%s c=%d: %d of %d requests failed; first: %s", r.Target, r.Concurrency, r.Errors, r.Requests, r.FirstError)
		}
	}
	return nil
}

// measurement is one timed run of one target at one concurrency.
type measurement struct {
	elapsed    time.Duration
	samples    []time.Duration
	errors     int
	firstError string
}

// measure runs c closed-loop workers against t until d has passed or n
// requests were sent (n > 0), and returns every request's latency.
func measure(t *target, body *bodies, contentType string, c int, d time.Duration, n int) measurement {
	limit := int64(maxRequests)
	if n > 0 {
		limit = int64(n)
	}
	// Workers stop issuing at the deadline and finish the request in
	// flight, so connections are not torn down between measurements.
	deadline := time.Now().Add(d)
	var issued atomic.Int64
	perWorker := make([]measurement, c)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func(m *measurement) {
			defer wg.Done()
			buf := body.buffer()
			for time.Now().Before(deadline) && issued.Add(1) <= limit {
				t0 := time.Now()
				if err := doRequest(t, body.next(buf), contentType); err != nil {
					if m.errors == 0 {
						m.firstError = err.Error()
					}
					m.errors++
					continue
				}
				m.samples = append(m.samples, time.Since(t0))
			}
		}(&perWorker[w])
	}
	wg.Wait()
	total := measurement{elapsed: time.Since(start)}
	for _, m := range perWorker {
		total.samples = append(total.samples, m.samples...)
		if total.errors == 0 && m.errors > 0 {
			total.firstError = m.firstError
		}
		total.errors += m.errors
	}
	return total
}

func doRequest(t *target, body []byte, contentType string) error {
	req, err := http.NewRequest(http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range t.headers {
		req.Header[k] = v
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if got == 0 {
		return errors.New("empty answer")
	}
	return nil
}

// bodies hands out request bodies: the design as it is (same), or the
// design followed by a counter written in JSON whitespace, different for
// every request of the run.
type bodies struct {
	design []byte
	same   bool
	count  atomic.Uint64
}

// suffixLen whitespace bytes of 2 bits each: 2^32 distinct bodies.
const suffixLen = 16

// buffer returns a worker's own buffer for next.
func (b *bodies) buffer() []byte {
	if b.same {
		return b.design
	}
	return append(append([]byte(nil), b.design...), make([]byte, suffixLen)...)
}

// next returns the body of the next request, in buf.
func (b *bodies) next(buf []byte) []byte {
	if b.same {
		return buf
	}
	n := b.count.Add(1)
	tail := buf[len(buf)-suffixLen:]
	for i := range tail {
		tail[i] = " \t\n\r"[n>>(2*i)&3]
	}
	return buf
}

func (r *result) add(m measurement) {
	r.Requests += len(m.samples) + m.errors
	r.Errors += m.errors
	if r.FirstError == "" {
		r.FirstError = m.firstError
	}
	r.Seconds += m.elapsed.Seconds()
	if m.elapsed > 0 {
		r.RoundRPS = append(r.RoundRPS, int(float64(len(m.samples))/m.elapsed.Seconds()+0.5))
	}
	r.samples = append(r.samples, m.samples...)
}

func (r *result) finish() {
	if r.Seconds > 0 {
		r.RPS = float64(len(r.samples)) / r.Seconds
	}
	if r.Requests > 0 {
		r.CPUusPerRequest = float64(r.cpuTicks) * 1e6 / clockTicks / float64(r.Requests)
	}
	if len(r.RoundRPS) > 0 {
		rates := append([]int(nil), r.RoundRPS...)
		sort.Ints(rates)
		if len(rates)%2 == 1 {
			r.MedianRPS = float64(rates[len(rates)/2])
		} else {
			r.MedianRPS = float64(rates[len(rates)/2-1]+rates[len(rates)/2]) / 2
		}
	}
	sort.Slice(r.samples, func(i, j int) bool { return r.samples[i] < r.samples[j] })
	r.P50us = percentile(r.samples, 50)
	r.P90us = percentile(r.samples, 90)
	r.P99us = percentile(r.samples, 99)
	r.MaxUs = percentile(r.samples, 100)
}

// percentile reads the p-th percentile (nearest rank) of sorted samples, in
// microseconds.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	if rank < 0 {
		rank = 0
	}
	if rank >= len(sorted) {
		rank = len(sorted) - 1
	}
	return float64(sorted[rank].Nanoseconds()) / 1e3
}

func printTable(w io.Writer, title string, results []*result, baseline string, withRSS bool) {
	if title != "" {
		fmt.Fprintf(w, "## %s\n", title)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "target\tc\trequests\treq/s\tmedian round req/s\tp50 ms\tp90 ms\tp99 ms"
	if baseline != "" {
		header += "\tadded p50 ms\tadded p99 ms"
	}
	if withRSS {
		header += "\tRSS before MiB\tRSS after MiB\tHWM after MiB\tCPU µs/req"
	}
	fmt.Fprintln(tw, header+"\terrors\t")
	for _, r := range results {
		line := fmt.Sprintf("%s\t%d\t%d\t%.0f\t%.0f\t%.3f\t%.3f\t%.3f", r.Target, r.Concurrency, r.Requests, r.RPS, r.MedianRPS,
			r.P50us/1e3, r.P90us/1e3, r.P99us/1e3)
		if baseline != "" {
			line += fmt.Sprintf("\t%+.3f\t%+.3f", r.AddedP50us/1e3, r.AddedP99us/1e3)
		}
		if withRSS {
			line += fmt.Sprintf("\t%.1f\t%.1f\t%.1f\t%.0f", float64(r.RSSBeforeKB)/1024, float64(r.RSSAfterKB)/1024, float64(r.HWMAfterKB)/1024, r.CPUusPerRequest)
		}
		fmt.Fprintf(tw, "%s\t%d\t\n", line, r.Errors)
	}
	_ = tw.Flush()
}

func parseConcurrencies(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 || c > maxConcurrency {
			return nil, fmt.Errorf("-c: %q is not a concurrency in [1, %d]", f, maxConcurrency)
		}
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
}

func parseTarget(spec string, maxConns int) (*target, error) {
	name, rest, ok := strings.Cut(spec, "=")
	if !ok || name == "" {
		return nil, fmt.Errorf("-target %q: want name=URL[;Header=value...]", spec)
	}
	parts := strings.Split(rest, ";")
	u, err := url.Parse(parts[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("-target %q: bad URL", spec)
	}
	if err := requireLoopback(u.Hostname()); err != nil {
		return nil, fmt.Errorf("-target %q: %w", spec, err)
	}
	headers := http.Header{}
	for _, h := range parts[1:] {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-target %q: header %q: want Name=value", spec, h)
		}
		headers.Add(k, v)
	}
	transport := &http.Transport{
		// Dial only what the URL names; no proxy from the environment.
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        maxConns,
		MaxIdleConnsPerHost: maxConns,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	return &target{
		name:    name,
		url:     parts[0],
		headers: headers,
		client:  &http.Client{Transport: transport, Timeout: 30 * time.Second},
	}, nil
}

func hasTarget(ts []*target, name string) bool {
	for _, t := range ts {
		if t.name == name {
			return true
		}
	}
	return false
}

// requireLoopback accepts a host only when every address it names is on
// loopback: the load never leaves this machine.
func requireLoopback(host string) error {
	ips, err := net.DefaultResolver.LookupIPAddr(context.Background(), host)
	if err != nil {
		return err
	}
	if len(ips) == 0 {
		return fmt.Errorf("%s: no address", host)
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return fmt.Errorf("%s (%s) is not a loopback address", host, ip.IP)
		}
	}
	return nil
}

func loadBody(file string, synthetic int) ([]byte, error) {
	switch {
	case file != "" && synthetic > 0:
		return nil, errors.New("use -body or -body-bytes, not both")
	case synthetic > 0:
		if synthetic > maxBodyBytes {
			return nil, fmt.Errorf("-body-bytes over %d", maxBodyBytes)
		}
		return syntheticDesign(synthetic), nil
	case file != "":
		st, err := os.Stat(file)
		if err != nil {
			return nil, err
		}
		if st.Size() > maxBodyBytes {
			return nil, fmt.Errorf("%s: over %d bytes", file, maxBodyBytes)
		}
		return os.ReadFile(file)
	default:
		return nil, errors.New("-body or -body-bytes is required")
	}
}

// syntheticDesign is a valid design JSON document of exactly size bytes (or
// the minimum document when size is smaller): one text row repeated, then
// padding in the page description, so a forwarder that parses JSON gets JSON.
func syntheticDesign(size int) []byte {
	const head = `{"page":{"title":"bench","description":"`
	const tail = `","body":{"content":{"computedStyle":{"messageWidth":"600px"}}},"rows":[]}}`
	pad := size - len(head) - len(tail)
	if pad < 0 {
		pad = 0
	}
	var b bytes.Buffer
	b.Grow(len(head) + pad + len(tail))
	b.WriteString(head)
	b.Write(bytes.Repeat([]byte("x"), pad))
	b.WriteString(tail)
	return b.Bytes()
}

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTicks = 100

// procCPUTicks reads the user + system time of a process, in clock ticks,
// from /proc/PID/stat (fields 14 and 15, counted after the command name,
// which may hold spaces).
func procCPUTicks(pid int) (int64, error) {
	if pid <= 0 {
		return 0, errors.New("no pid")
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	end := bytes.LastIndexByte(data, ')')
	fields := strings.Fields(string(data[end+1:]))
	if end < 0 || len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	// fields[0] is field 3 (state): utime is field 14, stime field 15.
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return utime + stime, nil
}

// procStatusKB reads one "Name:   1234 kB" line of /proc/PID/status.
func procStatusKB(pid int, field string) (int, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", field, err)
		}
		return kb, nil
	}
	return 0, fmt.Errorf("%s not in /proc/%d/status", field, pid)
}
