package browserpool

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/inspector"
	cdpio "github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Fetcher fetches an image the HTML shows. It must refuse what the
// service refuses (private addresses) and bound size and time.
type Fetcher interface {
	Fetch(ctx context.Context, url string) (body []byte, contentType string, err error)
}

// docURL is where the tab loads the HTML from: the pool answers it from
// memory (.invalid names never resolve), so the page has an origin of no
// value and relative URLs go nowhere.
const docURL = "http://content-service.invalid/document"

func withExecutor(ctx context.Context, e cdp.Executor) context.Context {
	return cdp.WithExecutor(ctx, e)
}

// documentPolicy is the document's Content-Security-Policy. Request
// interception never sees a data: URL, so without it a page could hand
// Chromium images the pool has not measured (48 KB of data: PNG decoded
// to 2 GB), and fonts, stylesheets and frames the pool refuses over the
// network. Images come only over HTTP(S), through the pool's fetcher and
// its budgets; a <meta> policy of the page can only narrow this one, and
// srcdoc frames (which interception does not see either) inherit it.
const documentPolicy = "default-src 'none'; img-src http: https:; style-src 'unsafe-inline'"

// MaxFullHeight bounds the page of a Full PDF, in CSS pixels; taller
// content is cut there.
const MaxFullHeight = 16384

// MaxPDFPages bounds a paginated PDF. Printing lays out every page before
// it prints any, and whatever repeats on each page (a position: fixed
// element, a table's header) is laid out and painted again on each: a
// fixed element of 20,000 words on a page 1,000,000 px tall (947 pages)
// took Chromium to 7.8 GB in 60 s. So a document that lays out taller
// than this many pages is refused before it is printed (ErrTooManyPages),
// and no more than this many are printed (forced page breaks can make a
// short document long). 194 pages of ordinary text print in 1.5 s, with
// 150 MB more in Chromium.
const MaxPDFPages = 200

// ErrTooManyPages is a document that lays out taller than MaxPDFPages
// pages of its paper.
var ErrTooManyPages = fmt.Errorf("the document is longer than %d pages", MaxPDFPages)

// pdfMargin is the margin of a paginated PDF's pages, in inches.
const pdfMargin = 0.4

// ErrTooLarge is a PDF larger than Config.MaxPDFBytes.
var ErrTooLarge = errors.New("the PDF is larger than the pool allows")

// pdfChunk is how much of a PDF the browser hands over at a time: the
// PDF is read from the browser as a stream, not in one DevTools message
// (which Go held three to four times over: base64, the message, the
// bytes).
const pdfChunk = 1 << 20

// PDFOptions is the paper of a PDF job; Full prints one page as tall as
// the content, Width pixels wide.
type PDFOptions struct {
	WidthIn, HeightIn float64 // paper in inches (portrait); ignored when Full
	Landscape         bool
	Full              bool
	Width             int64 // viewport width in CSS pixels
}

// ImageOptions is the shot of an image job: Width pixels wide, Height
// pixels tall (0: as tall as the content, up to MaxHeight).
type ImageOptions struct {
	Width, Height, MaxHeight int64
	JPEG                     bool
}

// PDF renders html to a PDF and writes it to w as it comes, at most
// Config.MaxPDFBytes; past them it fails with ErrTooLarge, and what w got
// is to be thrown away.
func (p *Pool) PDF(ctx context.Context, html string, opt PDFOptions, w io.Writer) error {
	return p.run(ctx, html, opt.Width, func(ctx context.Context) error {
		pr := page.PrintToPDF().WithPrintBackground(true).WithPreferCSSPageSize(false).
			WithTransferMode(page.PrintToPDFTransferModeReturnAsStream)
		if opt.Full {
			_, _, _, _, _, content, err := page.GetLayoutMetrics().Do(ctx)
			if err != nil {
				return err
			}
			// One page as tall as the content, up to MaxFullHeight.
			w, h := float64(opt.Width)/96, math.Ceil(min(content.Height+1, MaxFullHeight))/96
			pr = pr.WithPaperWidth(w).WithPaperHeight(h).WithMarginTop(0).WithMarginBottom(0).
				WithMarginLeft(0).WithMarginRight(0).WithPageRanges("1")
		} else {
			if err := checkPages(ctx, opt); err != nil {
				return err
			}
			pr = pr.WithPaperWidth(opt.WidthIn).WithPaperHeight(opt.HeightIn).WithLandscape(opt.Landscape).
				WithMarginTop(pdfMargin).WithMarginBottom(pdfMargin).WithMarginLeft(pdfMargin).WithMarginRight(pdfMargin).
				WithPageRanges(fmt.Sprintf("1-%d", MaxPDFPages))
		}
		_, stream, err := pr.Do(ctx)
		if err != nil {
			return err
		}
		return copyStream(ctx, w, stream, p.cfg.MaxPDFBytes)
	})
}

// copyStream writes the browser's stream to w, at most max bytes, and
// closes the stream.
func copyStream(ctx context.Context, w io.Writer, stream cdpio.StreamHandle, max int64) error {
	defer func() { _ = cdpio.Close(stream).Do(ctx) }()
	var written int64
	for {
		// Read's Do drops base64Encoded, which says how data is written.
		var res cdpio.ReadReturns
		if err := cdp.Execute(ctx, cdpio.CommandRead, cdpio.Read(stream).WithSize(pdfChunk), &res); err != nil {
			return err
		}
		chunk := []byte(res.Data)
		if res.Base64encoded {
			var err error
			if chunk, err = base64.StdEncoding.DecodeString(res.Data); err != nil {
				return err
			}
		}
		if written += int64(len(chunk)); written > max {
			return ErrTooLarge
		}
		if _, err := w.Write(chunk); err != nil {
			return err
		}
		if res.EOF {
			return nil
		}
	}
}

// checkPages lays the document out as it prints (print media, as wide as
// the paper's printable area) and refuses it when it is taller than
// MaxPDFPages of that area. Measured through DevTools, without script.
func checkPages(ctx context.Context, opt PDFOptions) error {
	w, h := opt.WidthIn, opt.HeightIn
	if opt.Landscape {
		w, h = h, w
	}
	w, h = (w-2*pdfMargin)*96, (h-2*pdfMargin)*96
	if err := emulation.SetEmulatedMedia().WithMedia("print").Do(ctx); err != nil {
		return err
	}
	if err := emulation.SetDeviceMetricsOverride(int64(w), int64(h), 1, false).Do(ctx); err != nil {
		return err
	}
	_, _, _, _, _, content, err := page.GetLayoutMetrics().Do(ctx)
	if err != nil {
		return err
	}
	if content.Height > MaxPDFPages*h {
		return ErrTooManyPages
	}
	return nil
}

// Image renders html to a PNG or JPEG.
func (p *Pool) Image(ctx context.Context, html string, opt ImageOptions) ([]byte, error) {
	var out []byte
	err := p.run(ctx, html, opt.Width, func(ctx context.Context) error {
		h := opt.Height
		if h <= 0 {
			_, _, _, _, _, content, err := page.GetLayoutMetrics().Do(ctx)
			if err != nil {
				return err
			}
			h = int64(math.Ceil(content.Height))
		}
		h = max(1, min(h, opt.MaxHeight))
		shot := page.CaptureScreenshot().WithCaptureBeyondViewport(true).
			WithClip(&page.Viewport{X: 0, Y: 0, Width: float64(opt.Width), Height: float64(h), Scale: 1})
		if opt.JPEG {
			shot = shot.WithFormat(page.CaptureScreenshotFormatJpeg).WithQuality(90)
		} else {
			shot = shot.WithFormat(page.CaptureScreenshotFormatPng)
		}
		data, err := shot.Do(ctx)
		out = data
		return err
	})
	return out, err
}

// run loads html in a fresh tab width pixels wide, then runs act on it,
// within the job timeout and ctx.
func (p *Pool) run(ctx context.Context, html string, width int64, act func(context.Context) error) error {
	// Waiting for a tab takes at most one job timeout, and the render
	// another; waiting for the browser to start is not counted (the start
	// is bounded by startTimeout), but ends with ctx.
	p.enter()
	defer p.leave()
	wait, cancelWait := context.WithTimeout(ctx, p.cfg.JobTimeout)
	err := p.acquire(wait)
	cancelWait()
	if err != nil {
		return err
	}
	defer p.release()
	b, err := p.browser(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.JobTimeout)
	defer cancel()

	// A fresh tab in a browser context of its own (see openTab). Closing
	// it waits for the browser, so a hung browser is killed (below)
	// before this runs.
	tab, closeTab, err := openTab(ctx, b)
	if err != nil {
		return p.failed(ctx, b, err)
	}
	defer closeTab()
	j := &job{html: html, fetches: make(chan struct{}, p.cfg.Fetches)}
	j.budget.Store(p.cfg.MaxImageBytes)
	j.pixels.Store(p.cfg.MaxImagePixels)
	// The job's deadline and cancellation apply to every call on the tab.
	jctx, jcancel := context.WithCancel(tab)
	defer jcancel()
	defer context.AfterFunc(ctx, jcancel)()
	// The page's crash is reported to the tab (Inspector.targetCrashed)
	// and to the browser, which says how the process ended
	// (Target.targetCrashed, naming the tab's target).
	crashed := make(chan struct{})
	reported := make(chan *PageCrash, 1)
	var crash, report sync.Once
	chromedp.ListenTarget(tab, func(ev any) {
		switch e := ev.(type) {
		case *inspector.EventTargetCrashed:
			// A call pending on the page (a navigation) may never be
			// answered now.
			crash.Do(func() { close(crashed) })
			jcancel()
		case *fetch.EventRequestPaused:
			// Not once b is stopping: its request dies with the browser.
			b.goTracked(func() { p.answer(tab, ctx, e, j) })
		}
	})
	// The tab first, so that the browser's crash reports can be told
	// apart by its target.
	err = chromedp.Run(jctx)
	if err == nil {
		tabID := chromedp.FromContext(tab).Target.TargetID
		chromedp.ListenBrowser(tab, func(ev any) {
			if e, ok := ev.(*target.EventTargetCrashed); ok && e.TargetID == tabID {
				report.Do(func() { reported <- &PageCrash{Status: e.Status, Code: e.ErrorCode} })
				jcancel()
			}
		})
		err = chromedp.Run(jctx,
			fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*"}}),
			emulation.SetScriptExecutionDisabled(true),
			emulation.SetDeviceMetricsOverride(width, 800, 1, false),
			chromedp.Navigate(docURL),
			chromedp.ActionFunc(act),
		)
	}
	if err == nil || errors.Is(err, ErrTooManyPages) || errors.Is(err, ErrTooLarge) {
		return err
	}
	// The call pending when the page crashed is answered (an error)
	// before the crash is reported: wait a moment for the report.
	grace := crashReportWait
	if ctx.Err() != nil || b.ctx.Err() != nil {
		grace = 0
	}
	select {
	case c := <-reported:
		return c
	case <-crashed:
		// The browser's report follows within moments, if it comes.
		select {
		case c := <-reported:
			return c
		case <-time.After(crashReportWait):
			return &PageCrash{}
		}
	case <-time.After(grace):
	}
	return p.failed(ctx, b, err)
}

// failed is the error of a job that failed with err, its page not
// crashed: a timeout (the browser replaced if it no longer answers), the
// browser's crash (the browser replaced), or err.
func (p *Pool) failed(ctx context.Context, b *instance, err error) error {
	if ctx.Err() != nil {
		// Timed out: the page, or the browser, hung. A browser that no
		// longer answers is replaced.
		if !alive(b) {
			p.replace(b, "it stopped answering")
		}
		return ErrTimeout
	}
	if b.ctx.Err() != nil {
		p.replace(b, "it crashed")
		return errors.New("the browser crashed; try again")
	}
	return err
}

// openTab opens a job's tab in a new browser context, which Chromium
// keeps in memory, as it does a private window's, and which closeTab
// discards with everything the page left in it. In the browser's own
// context, what one job's page left reached the next job's (a <meta>
// refresh to a fragment of the document's URL, with JavaScript off, made
// that URL :visited, which CSS showed in the next render), and the
// profile on disk grew with every render for as long as the browser
// lived (its history by about 175 bytes a render, its sessions and
// session storage too). Headless Chromium opens a tab of a new context
// only in a window of its own, which costs about 0.07 s of CPU a job
// (BenchmarkRender: 0.16 s to 0.24 s).
func openTab(ctx context.Context, b *instance) (tab context.Context, closeTab func(), err error) {
	c := chromedp.FromContext(b.ctx)
	if c == nil || c.Browser == nil {
		return nil, nil, chromedp.ErrInvalidContext
	}
	id, err := newBrowserContext(ctx, b, c.Browser)
	if err != nil {
		return nil, nil, err
	}
	dispose := func() { disposeBrowserContext(b, c.Browser, id) }
	if err := ctx.Err(); err != nil {
		dispose()
		return nil, nil, err
	}
	// The tab's call ends when the job's time is up or the browser is gone
	// (a call on a dead browser would otherwise wait out the job's time);
	// a tab that comes after is closed with its context.
	octx, cancel := context.WithCancel(b.ctx)
	if deadline, ok := ctx.Deadline(); ok {
		octx, cancel = context.WithDeadline(b.ctx, deadline)
	}
	defer cancel()
	tid, err := target.CreateTarget("about:blank").WithBrowserContextID(id).WithNewWindow(true).Do(withExecutor(octx, c.Browser))
	if err != nil {
		dispose()
		// octx's deadline is ctx's on a timer of its own: when it ended
		// the call, wait for ctx's (at once), so that the job is read as
		// timed out.
		if errors.Is(octx.Err(), context.DeadlineExceeded) {
			<-ctx.Done()
		}
		return nil, nil, err
	}
	tab, closeTarget := chromedp.NewContext(b.ctx, chromedp.WithTargetID(tid))
	return tab, func() { closeTarget(); dispose() }, nil
}

// newBrowserContext asks the browser for a browser context and waits for
// it while ctx lasts. Chromium makes the context whether or not its
// answer is awaited, so the call itself lasts as long as the browser, in
// the background: a context that comes once its job is gone (its caller
// gave up, its time is up while the browser is slow) is disposed then.
func newBrowserContext(ctx context.Context, b *instance, br *chromedp.Browser) (cdp.BrowserContextID, error) {
	type made struct {
		id  cdp.BrowserContextID
		err error
	}
	res := make(chan made)
	gone := make(chan struct{})
	defer close(gone)
	if !b.goTracked(func() {
		exec := withExecutor(b.ctx, br)
		id, err := target.CreateBrowserContext().WithDisposeOnDetach(true).Do(exec)
		select {
		case res <- made{id, err}:
		case <-gone:
			if err == nil {
				_ = target.DisposeBrowserContext(id).Do(exec)
			}
		}
	}) {
		return "", context.Cause(b.ctx)
	}
	select {
	case r := <-res:
		return r.id, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// disposeBrowserContext disposes the context id, which closes its tab if
// closing it failed. The call lasts as long as the browser, in the
// background: the job waits for it a moment only (also once its time is
// up), and a browser slow to answer still disposes the context.
func disposeBrowserContext(b *instance, br *chromedp.Browser, id cdp.BrowserContextID) {
	done := make(chan struct{})
	if !b.goTracked(func() {
		defer close(done)
		_ = target.DisposeBrowserContext(id).Do(withExecutor(b.ctx, br))
	}) {
		return
	}
	select {
	case <-done:
	case <-time.After(disposeWait):
	}
}

// disposeWait is how long a job waits for its browser context to be
// disposed.
const disposeWait = time.Second

// crashReportWait is how long a failed job waits for the report that its
// page crashed, which comes after the failed call's answer (in
// milliseconds, when it comes), and how long a crashed page's job waits
// for the browser's report of how the process ended.
const crashReportWait = time.Second

// job is what the requests of one job's tab share.
type job struct {
	html      string
	docServed atomic.Bool   // the document is answered once, to the tab itself
	images    atomic.Int64  // images asked for (up to Config.MaxImages)
	fetches   chan struct{} // images being fetched and handed over (Config.Fetches)
	budget    atomic.Int64  // bytes of images still allowed (Config.MaxImageBytes)
	pixels    atomic.Int64  // pixels of images still allowed (Config.MaxImagePixels)
}

// answer handles one request of the tab: the document from memory, an
// image through the Fetcher, anything else refused.
func (p *Pool) answer(tab, ctx context.Context, e *fetch.EventRequestPaused, j *job) {
	c := chromedp.FromContext(tab)
	if c == nil || c.Target == nil {
		return
	}
	exec := cdp.WithExecutor(ctx, c.Target)
	url := e.Request.URL
	switch {
	case url == docURL && e.ResourceType == network.ResourceTypeDocument && j.docServed.CompareAndSwap(false, true):
		// Once: frames pointing at it again would each be sent the
		// whole HTML (1,500 of them in a 3 MiB page made 4 GiB).
		_ = fetch.FulfillRequest(e.RequestID, 200).
			WithResponseHeaders([]*fetch.HeaderEntry{
				{Name: "Content-Type", Value: "text/html; charset=utf-8"},
				{Name: "Content-Security-Policy", Value: documentPolicy},
			}).
			WithBody(base64.StdEncoding.EncodeToString([]byte(j.html))).Do(exec)
		return
	case e.ResourceType == network.ResourceTypeImage && isHTTP(url) && j.images.Add(1) <= int64(p.cfg.MaxImages):
		if p.fetchImage(ctx, exec, e, j) {
			return
		}
	}
	_ = fetch.FailRequest(e.RequestID, network.ErrorReasonBlockedByClient).Do(exec)
}

// fetchImage fetches the image e asks for and hands it to the browser,
// one of at most Config.Fetches of the job at a time and within its
// budgets of bytes and pixels; false when it did not.
func (p *Pool) fetchImage(ctx, exec context.Context, e *fetch.EventRequestPaused, j *job) bool {
	select {
	case j.fetches <- struct{}{}:
		defer func() { <-j.fetches }()
	case <-ctx.Done():
		return false
	}
	if j.budget.Load() <= 0 {
		return false
	}
	body, ctype, err := p.cfg.Fetch.Fetch(ctx, e.Request.URL)
	if err != nil || j.budget.Add(-int64(len(body))) < 0 {
		return false
	}
	if px, err := imagePixels(body); err != nil || j.pixels.Add(-px) < 0 {
		return false
	}
	_ = fetch.FulfillRequest(e.RequestID, 200).
		WithResponseHeaders([]*fetch.HeaderEntry{{Name: "Content-Type", Value: ctype}}).
		WithBody(base64.StdEncoding.EncodeToString(body)).Do(exec)
	return true
}

func isHTTP(u string) bool {
	l := strings.ToLower(u)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}
