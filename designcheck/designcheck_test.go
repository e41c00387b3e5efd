package designcheck

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
)

// mapWeigher weighs from a table: the checks' logic, without a network
// (HTTPWeigher has its own tests).
type mapWeigher map[string]int64

func (m mapWeigher) Weigh(_ context.Context, src string) (int64, error) {
	if n, ok := m[src]; ok {
		return n, nil
	}
	return 0, errors.New("timed out")
}

func loadDesign(t *testing.T, name string) *design.Design {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := design.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func f64(v float64) *float64 { return &v }

// brief is a target reduced to what a case states.
type brief struct {
	uuid, typ, label string
	locked, synced   bool
}

func briefs(ts []Target) []brief {
	var out []brief
	for _, t := range ts {
		b := brief{uuid: t.UUID, typ: t.WidgetType}
		if t.WidgetLabel != nil {
			b.label = *t.WidgetLabel
		}
		if t.Locked != nil {
			b.locked = *t.Locked
		}
		if t.Synced != nil {
			b.synced = *t.Synced
		}
		if t.DetailType != "" {
			b.typ = "detail:" + t.DetailType
		}
		out = append(out, b)
	}
	return out
}

func TestWidgetChecks(t *testing.T) {
	d := loadDesign(t, "checks.json")
	var (
		img1    = brief{"img-1", "image", "photo one.jpg", true, false}
		gif1    = brief{"gif-1", "gif", "https://media.example/anim.gif?cid=1", true, false}
		fb      = brief{"soc-1", "social", "facebook", false, true}
		star    = brief{"ico-1", "icon", "star.png", true, true}
		btn1    = brief{"btn-1", "button", "Buy now", false, true}
		btn2it  = brief{"btn-2", "button", "Leggi", false, true}
		blog    = brief{"menu-1", "menu", "Blog", false, true}
		subject = brief{typ: "detail:preheader"}
		title   = brief{typ: "detail:title"}
	)
	for _, tc := range []struct {
		category, lang string
		coll           Collection
		status         string
		want           []brief
	}{
		{MissingAltText, DefaultLanguage, Message, StatusWarning, []brief{img1, gif1, fb, star}},
		{MissingAltText, "it-IT", Message, StatusWarning, []brief{gif1, fb, star}}, // img-1 has an Italian alt
		{MissingImageLink, DefaultLanguage, Message, StatusSuggestion, []brief{img1, star}},
		{MissingCopyLink, DefaultLanguage, Message, StatusWarning, []brief{btn1, fb, blog}},
		{MissingCopyLink, "it-IT", Page, StatusWarning, []brief{btn1, btn2it, fb, blog}},
		{MissingDetailsEmail, DefaultLanguage, Message, StatusSuggestion, []brief{subject}},
		{MissingDetailsPage, DefaultLanguage, Page, StatusSuggestion, []brief{title}},
	} {
		t.Run(tc.category+"/"+tc.lang, func(t *testing.T) {
			req := Request{Checks: []Spec{{Category: tc.category}}, Languages: []string{tc.lang}}
			specs, langs, err := req.Validate(tc.coll)
			if err != nil {
				t.Fatal(err)
			}
			res := Run(context.Background(), d, tc.coll, specs, langs, Options{})
			var got *Result
			for _, lr := range res {
				if lr.Language == tc.lang {
					got = &lr.Checks[0]
				}
			}
			if got == nil {
				t.Fatalf("no result for %s: %+v", tc.lang, res)
			}
			if got.Type != tc.category || got.CheckStatus != tc.status || got.TargetsCount != len(tc.want) {
				t.Errorf("type %s status %s count %d, want %s %s %d", got.Type, got.CheckStatus, got.TargetsCount, tc.category, tc.status, len(tc.want))
			}
			if b := briefs(got.Targets); !reflect.DeepEqual(b, tc.want) {
				t.Errorf("targets\n got %+v\nwant %+v", b, tc.want)
			}
		})
	}
}

func TestImageWeight(t *testing.T) {
	d := loadDesign(t, "checks.json")
	w := mapWeigher{
		"https://img.example/a/photo%20one.jpg":  100 << 10,
		"https://img.example/big.png":            600 << 10,
		"https://media.example/anim.gif?cid=1":   2 << 20,
		"https://icons.example/facebook.png":     1 << 10,
		"https://icons.example/i/star.png":       500<<10 + 1, // one byte over
		"https://icons.example/x.png-not-listed": 0,
	}
	for _, tc := range []struct {
		limit   float64
		weights []float64
		uuids   []string
	}{
		{500, []float64{600, 2048, 500}, []string{"img-2", "gif-1", "ico-1"}},
		{1000, []float64{2048}, []string{"gif-1"}},
		{4096, nil, nil},
	} {
		specs, langs, err := (&Request{Checks: []Spec{{Category: OverageImageWeight, Limit: f64(tc.limit)}}}).Validate(Message)
		if err != nil {
			t.Fatal(err)
		}
		r := Run(context.Background(), d, Message, specs, langs, Options{Weigher: w})[0].Checks[0]
		var weights []float64
		var uuids []string
		for _, tg := range r.Targets {
			weights = append(weights, *tg.Weight)
			uuids = append(uuids, tg.UUID)
		}
		if !reflect.DeepEqual(weights, tc.weights) || !reflect.DeepEqual(uuids, tc.uuids) {
			t.Errorf("limit %v: weights %v on %v, want %v on %v", tc.limit, weights, uuids, tc.weights, tc.uuids)
		}
		if *r.Limit != tc.limit || *r.Evaluated != 6 || *r.Errored != 1 {
			t.Errorf("limit %v evaluated %d errored %d", *r.Limit, *r.Evaluated, *r.Errored)
		}
		if len(r.ErroredTargets) != 1 || r.ErroredTargets[0].WidgetLabel == nil || *r.ErroredTargets[0].WidgetLabel != "x" || r.ErroredTargets[0].Reason != "timed out" {
			t.Errorf("erroredTargets %+v", r.ErroredTargets)
		}
		wantStatus := StatusWarning
		if len(tc.uuids) == 0 {
			wantStatus = StatusPassed
		}
		if r.CheckStatus != wantStatus {
			t.Errorf("limit %v: status %s", tc.limit, r.CheckStatus)
		}
	}
}

func TestHTMLWeight(t *testing.T) {
	d := loadDesign(t, "checks.json")
	run := func(limit float64, beautified bool) Result {
		specs, langs, err := (&Request{Checks: []Spec{{Category: OverageHTMLWeight, Limit: f64(limit), Beautified: &beautified}}}).Validate(Message)
		if err != nil {
			t.Fatal(err)
		}
		return Run(context.Background(), d, Message, specs, langs, Options{})[0].Checks[0]
	}
	pretty, compact := run(1000, true), run(1000, false)
	if !*pretty.Processed || pretty.MaxWeight == nil || compact.MaxWeight == nil {
		t.Fatalf("not processed: %+v", pretty)
	}
	// Bounded as the service's exports are: a render past the bound is
	// not weighed.
	bounded := func(maxOutput int) Result {
		specs, langs, _ := (&Request{Checks: []Spec{{Category: OverageHTMLWeight, Limit: f64(1000), Beautified: new(bool)}}}).Validate(Message)
		return Run(context.Background(), d, Message, specs, langs, Options{Limits: render.Limits{MaxOutput: maxOutput}})[0].Checks[0]
	}
	if r := bounded(1000); *r.Processed || r.MaxWeight != nil {
		t.Errorf("rendered past a 1000-byte bound: %+v", r)
	}
	if r := bounded(1 << 20); !*r.Processed {
		t.Errorf("not processed within a 1 MiB bound: %+v", r)
	}
	if *pretty.MaxWeight <= *compact.MaxWeight {
		t.Errorf("beautified %v KB is not heavier than minified %v KB", *pretty.MaxWeight, *compact.MaxWeight)
	}
	if pretty.CheckStatus != StatusPassed || len(pretty.Targets) != 0 {
		t.Errorf("under the limit: %+v", pretty)
	}
	// Just under the beautified weight: over the limit, one target.
	over := run(*pretty.MaxWeight-0.5, true)
	if over.CheckStatus != StatusWarning || len(over.Targets) != 1 || !*over.Targets[0].Beautified || *over.Targets[0].Weight != *pretty.MaxWeight {
		t.Errorf("over the limit: %+v", over)
	}
	if *over.DisplayConditions {
		t.Error("displayConditions without any")
	}
}

func TestBeautifiedSize(t *testing.T) {
	doc := []byte("<div><p>Hi</p><br></div>")
	// <div>\n  <p>\n    Hi\n  </p>\n  <br>\n</div>\n
	if got, want := beautifiedSize(doc), int64(len("<div>\n  <p>\n    Hi\n  </p>\n  <br>\n</div>\n")); got != want {
		t.Errorf("beautified %d, want %d", got, want)
	}
	if got := minifiedSize([]byte("<div>\n  <p> Hi </p>\n</div>\n")); got != int64(len("<div><p> Hi </p></div>")) {
		t.Errorf("minified %d", got)
	}
}

func TestLanguageTotals(t *testing.T) {
	d := loadDesign(t, "checks.json")
	specs, langs, err := (&Request{
		Languages: []string{"it-IT", "default", "it-it"},
		Checks:    []Spec{{Category: MissingAltText}, {Category: MissingImageLink}, {Category: MissingDetailsEmail}},
	}).Validate(Message)
	if err != nil {
		t.Fatal(err)
	}
	res := Run(context.Background(), d, Message, specs, langs, Options{})
	if len(res) != 2 || res[0].Language != "default" || res[1].Language != "it-IT" {
		t.Fatalf("languages %+v", res)
	}
	def, it := res[0], res[1]
	if def.ChecksWarningCount != 4 || def.ChecksSuggestionCount != 3 || def.ChecksFailedCount != 7 || def.Status != StatusWarning {
		t.Errorf("default totals %+v", def)
	}
	// The email details are answered once, under default.
	if len(it.Checks) != 2 || it.ChecksFailedCount != 5 {
		t.Errorf("it-IT: %d checks, failed %d", len(it.Checks), it.ChecksFailedCount)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		coll Collection
		req  Request
		want string // part of the error; "" for none
	}{
		{"none", Message, Request{}, "at least one check"},
		{"unknown", Message, Request{Checks: []Spec{{Category: "spelling"}}}, `"spelling" is not a check of /v1/message/check`},
		{"vendor only", Message, Request{Checks: []Spec{{Category: "unreachableWebLink"}}}, "not offered by this service"},
		{"email check on a page", Page, Request{Checks: []Spec{{Category: MissingDetailsEmail}}}, "not a check of /v1/page/check"},
		{"html on a row", Row, Request{Checks: []Spec{{Category: OverageHTMLWeight}}}, "not a check of /v1/row/check"},
		{"twice", Row, Request{Checks: []Spec{{Category: MissingAltText}, {Category: MissingAltText}}}, "listed twice"},
		{"negative limit", Page, Request{Checks: []Spec{{Category: OverageImageWeight, Limit: f64(-1)}}}, "positive number of KB"},
		{"option on alt", Page, Request{Checks: []Spec{{Category: MissingAltText, Limit: f64(1)}}}, "takes no options"},
		{"bad language", Message, Request{Checks: []Spec{{Category: MissingAltText}}, Languages: []string{"<script>"}}, "languages[0]"},
		{"no category", Message, Request{Checks: []Spec{{}}}, "checks[0].category is required"},
		{"ok", Page, Request{Checks: []Spec{{Category: OverageImageWeight}, {Category: MissingDetailsPage}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			specs, _, err := tc.req.Validate(tc.coll)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if *specs[0].Limit != 700 {
					t.Errorf("page image limit %v, want the default 700", *specs[0].Limit)
				}
				return
			}
			var re *RequestError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want a RequestError with %q", err, tc.want)
			}
		})
	}
}

// countingWeigher counts the URLs it is asked for.
type countingWeigher struct{ n atomic.Int64 }

func (c *countingWeigher) Weigh(context.Context, string) (int64, error) {
	c.n.Add(1)
	return 1, nil
}

// TestMaxImages: a design with more distinct images than MaxImages gets
// the others reported, never fetched.
func TestMaxImages(t *testing.T) {
	var mods []string
	for i := range 30 {
		mods = append(mods, `{"type":"mailup-bee-newsletter-modules-image","uuid":"i`+strconv.Itoa(i)+
			`","descriptor":{"image":{"src":"https://img.example/`+strconv.Itoa(i)+`.png","alt":"x","href":"x"}}}`)
	}
	d, err := design.Decode([]byte(`{"page":{"rows":[{"uuid":"r","columns":[{"modules":[` + strings.Join(mods, ",") + `]}]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	specs, langs, _ := (&Request{Checks: []Spec{{Category: OverageImageWeight}}}).Validate(Message)
	w := &countingWeigher{}
	r := Run(context.Background(), d, Message, specs, langs, Options{Weigher: w, MaxImages: 5})[0].Checks[0]
	if w.n.Load() != 5 || *r.Errored != 25 || *r.Evaluated != 30 || r.ErroredTargets[0].Reason != "too many distinct images in one request" {
		t.Errorf("%d fetched, %d errored of %d (%+v)", w.n.Load(), *r.Errored, *r.Evaluated, r.ErroredTargets[0])
	}
}
