package browserpool

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// benchHTML is a starter design rendered to email HTML; its images point
// at hosts the pool refuses (no network in a benchmark), so they fail at
// once and the page is laid out without them.
func benchHTML(b *testing.B) string {
	d, err := design.Decode(designtest.OwnFile(b, "starter-newsletter"))
	if err != nil {
		b.Fatal(err)
	}
	out, err := render.HTML(d)
	if err != nil {
		b.Fatal(err)
	}
	return string(out.Body)
}

// BenchmarkRender measures one tab rendering the newsletter to an A4 PDF
// and to a 600 px PNG, one job after another, and reports the CPU the
// whole job costs: this process and every process of the browser
// (cpu-s/op; 1/cpu-s/op is jobs per second per core).
func BenchmarkRender(b *testing.B) {
	if err := Check(chromium); err != nil {
		b.Skip(err)
	}
	html := benchHTML(b)
	p, err := New(Config{ExecPath: chromium, Tabs: 1, JobTimeout: time.Minute, Fetch: noFetch{}, MaxImages: 0})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, bc := range []struct {
		name string
		job  func() error
	}{
		{"pdf-A4", func() error {
			return p.PDF(context.Background(), html, PDFOptions{WidthIn: 8.27, HeightIn: 11.69, Width: 800}, io.Discard)
		}},
		{"png-600", func() error {
			_, err := p.Image(context.Background(), html, ImageOptions{Width: 600, MaxHeight: 16384})
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if err := bc.job(); err != nil { // start the browser, warm up
				b.Fatal(err)
			}
			root := chromedp.FromContext(p.current.ctx).Browser.Process().Pid
			start := cpuTicks(root)
			b.ResetTimer()
			for b.Loop() {
				if err := bc.job(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTicks(root)-start)/ticksPerSecond/float64(b.N), "cpu-s/op")
		})
	}
}

type noFetch struct{}

func (noFetch) Fetch(context.Context, string) ([]byte, string, error) {
	return nil, "", os.ErrPermission
}

// ticksPerSecond is Linux's USER_HZ.
const ticksPerSecond = 100

// cpuTicks is the user and system CPU of this process and of root and
// its descendants, in ticks.
func cpuTicks(root int) int64 {
	type proc struct {
		ppid int
		cpu  int64
	}
	procs := map[int]proc{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		data, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses.
		text := string(data)
		f := strings.Fields(text[strings.LastIndexByte(text, ')')+2:])
		if len(f) < 13 {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
		ppid, _ := strconv.Atoi(f[1])
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		procs[pid] = proc{ppid, ut + st}
	}
	var total int64
	for pid, pr := range procs {
		for p := pid; p > 1; p = procs[p].ppid {
			if p == root {
				total += pr.cpu
				break
			}
			if _, ok := procs[p]; !ok {
				break
			}
		}
	}
	return total + procs[os.Getpid()].cpu
}
