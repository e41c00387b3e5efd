package designcheck

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"sync"

	"golang.org/x/net/html"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/internal/safefetch"
	"github.com/designbridge/caddy-designbridge/render"
)

// Weigher finds the size in bytes of the image at an http(s) URL. An
// error's text is shown to the client as the reason the image could not
// be weighed, so it must not hold anything but the URL's own facts.
type Weigher interface {
	Weigh(ctx context.Context, url string) (int64, error)
}

// weighParallel is how many images one request weighs at a time.
const weighParallel = 4

// defaultMaxImages bounds the distinct URLs weighed for one request.
const defaultMaxImages = 200

// requestsPerImage is the HTTP requests one request's weighing may send
// per image of MaxImages, redirects included: a HEAD and a GET, and a
// redirect each. An image may take up to 12 (each of the two following
// 5 redirects); without a budget a design of 200 such images made 2,400.
const requestsPerImage = 4

// imageWeight answers overageImageWeight: every image, gif, sticker, icon
// and social icon is weighed (each distinct URL once) and those over
// limit KB are the targets; those that cannot be weighed are counted in
// errored and listed with their reason.
func imageWeight(ctx context.Context, widgets []widget, limit float64, opt Options) Result {
	maxImages := opt.MaxImages
	if maxImages <= 0 {
		maxImages = defaultMaxImages
	}
	type answer struct {
		size int64
		err  string
	}
	answers := map[string]*answer{}
	var order []string
	var imgs []*widget
	for i := range widgets {
		w := &widgets[i]
		switch w.typ {
		case widgetImage, widgetGIF, widgetSticker, widgetIcon, widgetSocial:
		default:
			continue
		}
		src := w.source(DefaultLanguage)
		if src == "" {
			continue
		}
		imgs = append(imgs, w)
		if _, ok := answers[src]; !ok {
			answers[src] = &answer{}
			order = append(order, src)
		}
	}

	// Weigh: data: URLs here, http(s) through the Weigher, a few at a
	// time; the request's context bounds the whole, in time and in
	// requests sent.
	ctx = safefetch.WithBudget(ctx, int64(maxImages)*requestsPerImage)
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range min(weighParallel, len(order)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for src := range jobs {
				a := answers[src] // each src goes to one worker only
				if opt.Weigher == nil {
					a.err = "image weights are not fetched by this service"
					continue
				}
				n, err := opt.Weigher.Weigh(ctx, src)
				if err != nil {
					a.err = err.Error()
				} else {
					a.size = n
				}
			}
		}()
	}
	for i, src := range order {
		a := answers[src]
		switch {
		case strings.HasPrefix(strings.ToLower(src), "data:"):
			if n, ok := dataURLSize(src); ok {
				a.size = n
			} else {
				a.err = "malformed data: URL"
			}
		case !isHTTPURL(src):
			a.err = "not an http or https URL"
		case i >= maxImages:
			a.err = "too many distinct images in one request"
		default:
			jobs <- src
		}
	}
	close(jobs)
	wg.Wait()

	lim, evaluated, errored := limit, len(imgs), 0
	r := Result{Type: OverageImageWeight, CheckStatus: StatusWarning, Limit: &lim, Evaluated: &evaluated, Errored: &errored}
	for _, w := range imgs {
		a := answers[w.source(DefaultLanguage)]
		if a.err != "" {
			errored++
			t := w.target(DefaultLanguage)
			t.Reason = a.err
			r.ErroredTargets = append(r.ErroredTargets, t)
			continue
		}
		if weight := kb(a.size); float64(a.size) > limit*1024 {
			t := w.target(DefaultLanguage)
			t.Weight = &weight
			r.Targets = append(r.Targets, t)
		}
	}
	return r
}

func isHTTPURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// dataURLSize is the size of a data: URL's payload.
func dataURLSize(s string) (int64, bool) {
	meta, payload, ok := strings.Cut(s[len("data:"):], ",")
	if !ok {
		return 0, false
	}
	if strings.HasSuffix(strings.ToLower(meta), ";base64") {
		n := base64.StdEncoding.DecodedLen(len(strings.TrimRight(payload, "=")))
		return int64(n), true
	}
	return int64(len(payload)), true
}

// htmlWeight answers overageHtmlWeight: the design is rendered to email
// HTML and weighed, indented one tag a line when beautified, else as
// rendered with the white space between tags removed.
func htmlWeight(d *design.Design, limit float64, beautified bool, bounds render.Limits) Result {
	lim := limit
	conds := false
	for i := range d.Page.Rows {
		conds = conds || d.Page.Rows[i].DisplayBefore != "" || d.Page.Rows[i].DisplayAfter != ""
	}
	processed := false
	r := Result{Type: OverageHTMLWeight, CheckStatus: StatusWarning, Limit: &lim, DisplayConditions: &conds, Processed: &processed}
	out, err := render.HTMLWithLimits(d, bounds)
	if err != nil {
		// The renderer refused the design (or its bounds did): the check could not run, as
		// the vendor answers when its parser does not respond.
		return r
	}
	defer out.Release()
	processed = true
	var n int64
	if beautified {
		n = beautifiedSize(out.Body)
	} else {
		n = minifiedSize(out.Body)
	}
	weight := kb(n)
	r.MaxWeight = &weight
	if float64(n) > limit*1024 {
		b := beautified
		r.Targets = append(r.Targets, Target{Weight: &weight, Beautified: &b})
	}
	return r
}

// beautifiedSize is the size doc would have indented by two spaces a
// level, one tag or text run a line: the way an HTML beautifier writes it.
func beautifiedSize(doc []byte) int64 {
	z := html.NewTokenizer(bytes.NewReader(doc))
	var n int64
	depth := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return n
		case html.TextToken:
			text := bytes.TrimSpace(z.Raw())
			if len(text) == 0 {
				continue
			}
			n += int64(2*depth+len(text)) + 1
			continue
		case html.EndTagToken:
			if depth > 0 {
				depth--
			}
		}
		n += int64(2*depth+len(bytes.TrimSpace(z.Raw()))) + 1
		if tt == html.StartTagToken {
			if name, _ := z.TagName(); !voidElement(string(name)) {
				depth++
			}
		}
	}
}

// minifiedSize is the size of doc without the white space between tags.
func minifiedSize(doc []byte) int64 {
	z := html.NewTokenizer(bytes.NewReader(doc))
	var n int64
	for {
		switch z.Next() {
		case html.ErrorToken:
			return n
		case html.TextToken:
			raw := z.Raw()
			if len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
			n += int64(len(raw))
		default:
			n += int64(len(z.Raw()))
		}
	}
}

func voidElement(name string) bool {
	switch name {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr":
		return true
	}
	return false
}
