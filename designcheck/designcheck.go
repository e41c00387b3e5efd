// Package designcheck runs pre-send checks on a design, the way the
// vendor's Check API does (POST /v1/{message,page,row}/check): missing alt
// text, missing links on images and on copy, images and HTML over a weight
// limit, missing email or page details. It knows nothing of Caddy; image
// weights come from a Weigher (see HTTPWeigher).
package designcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
)

// Collection is what a check request checks: a message (email), a page,
// or one row.
type Collection string

// The collections of the Check API.
const (
	Message Collection = "message"
	Page    Collection = "page"
	Row     Collection = "row"
)

// Check categories (the request's "category", the answer's "type").
const (
	MissingAltText      = "missingAltText"
	MissingImageLink    = "missingImageLink"
	MissingCopyLink     = "missingCopyLink"
	OverageImageWeight  = "overageImageWeight"
	MissingDetailsEmail = "missingDetailsEmail"
	MissingDetailsPage  = "missingDetailsPage"
	OverageHTMLWeight   = "overageHtmlWeight"
)

// Check statuses.
const (
	StatusPassed     = "passed"
	StatusWarning    = "warning"
	StatusSuggestion = "suggestion"
)

// DefaultLanguage names the design's own copy in the answer.
const DefaultLanguage = "default"

// Bounds of a request.
const (
	MaxChecks    = 32 // entries of "checks"
	MaxLanguages = 16 // entries of "languages"
)

// Spec is one entry of the request's "checks".
type Spec struct {
	Category string `json:"category"`
	// Limit is the weight limit in KB (1 KB = 1024 bytes) of
	// overageImageWeight and overageHtmlWeight; the collection's default
	// when absent.
	Limit *float64 `json:"limit,omitempty"`
	// Beautified (overageHtmlWeight) weighs the HTML indented, one tag a
	// line, rather than as rendered; default true.
	Beautified *bool `json:"beautified,omitempty"`
}

// Request is a check request body, without the design itself (the
// caller decodes "template" or "row").
type Request struct {
	Languages []string        `json:"languages,omitempty"`
	Checks    []Spec          `json:"checks"`
	Template  json.RawMessage `json:"template,omitempty"`
	Row       json.RawMessage `json:"row,omitempty"`
}

// RequestError is a request the checks cannot run: its message says what
// to fix, naming the member.
type RequestError struct{ Msg string }

func (e *RequestError) Error() string { return e.Msg }

func reqErr(format string, args ...any) error {
	return &RequestError{Msg: fmt.Sprintf(format, args...)}
}

// available lists the checks each collection offers, with their default
// limits (KB) where they take one.
var available = map[Collection]map[string]float64{
	Message: {MissingAltText: 0, MissingImageLink: 0, MissingCopyLink: 0, OverageImageWeight: 500, MissingDetailsEmail: 0, OverageHTMLWeight: 80},
	Page:    {MissingAltText: 0, MissingImageLink: 0, MissingCopyLink: 0, OverageImageWeight: 700, MissingDetailsPage: 0},
	Row:     {MissingAltText: 0, MissingImageLink: 0, MissingCopyLink: 0, OverageImageWeight: 500},
}

// vendorOnly are categories the vendor documents that this service does
// not run; they are refused by name rather than as unknown.
var vendorOnly = map[string]bool{
	"missingHeadings": true, "overageHeadings": true, "missingMainLanguage": true,
	"unreachableWebLink": true, "insufficientColorContrast": true, "insufficientFontSize": true,
}

var languageTag = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$`)

// Validate checks the request for collection c and returns its checks
// with their limits resolved and its languages, "default" first.
func (r *Request) Validate(c Collection) ([]Spec, []string, error) {
	offered, ok := available[c]
	if !ok {
		return nil, nil, reqErr("unknown collection %q", c)
	}
	if len(r.Checks) == 0 {
		return nil, nil, reqErr("checks: at least one check is required, e.g. [{\"category\":\"missingAltText\"}]")
	}
	if len(r.Checks) > MaxChecks {
		return nil, nil, reqErr("checks: at most %d entries", MaxChecks)
	}
	specs := make([]Spec, 0, len(r.Checks))
	seen := map[string]bool{}
	for i, s := range r.Checks {
		def, ok := offered[s.Category]
		switch {
		case s.Category == "":
			return nil, nil, reqErr("checks[%d].category is required", i)
		case !ok && vendorOnly[s.Category]:
			return nil, nil, reqErr("checks[%d].category %q is not offered by this service", i, s.Category)
		case !ok:
			return nil, nil, reqErr("checks[%d].category %q is not a check of /v1/%s/check", i, s.Category, c)
		case seen[s.Category]:
			return nil, nil, reqErr("checks[%d].category %q is listed twice", i, s.Category)
		}
		seen[s.Category] = true
		if s.Category == OverageImageWeight || s.Category == OverageHTMLWeight {
			if s.Limit == nil {
				s.Limit = &def
			} else if l := *s.Limit; math.IsNaN(l) || l <= 0 || l > 1<<20 {
				return nil, nil, reqErr("checks[%d].limit must be a positive number of KB", i)
			}
		} else if s.Limit != nil || s.Beautified != nil {
			return nil, nil, reqErr("checks[%d]: %s takes no options", i, s.Category)
		}
		if s.Category == OverageHTMLWeight && s.Beautified == nil {
			t := true
			s.Beautified = &t
		}
		specs = append(specs, s)
	}
	if len(r.Languages) > MaxLanguages {
		return nil, nil, reqErr("languages: at most %d entries", MaxLanguages)
	}
	langs := []string{DefaultLanguage}
	for i, l := range r.Languages {
		if l == DefaultLanguage {
			continue
		}
		if !languageTag.MatchString(l) {
			return nil, nil, reqErr("languages[%d] is not a language tag such as \"it-IT\"", i)
		}
		dup := false
		for _, have := range langs {
			dup = dup || strings.EqualFold(have, l)
		}
		if !dup {
			langs = append(langs, l)
		}
	}
	return specs, langs, nil
}

// LanguageResult is the answer for one language; the whole answer is a
// list of them, "default" first.
type LanguageResult struct {
	Language              string   `json:"language"`
	Checks                []Result `json:"checks"`
	ChecksFailedCount     int      `json:"checksFailedCount"`
	ChecksWarningCount    int      `json:"checksWarningCount"`
	ChecksSuggestionCount int      `json:"checksSuggestionCount"`
	Status                string   `json:"status"`
}

// Result is the answer of one check. The members after Targets are those
// of the weight checks only.
type Result struct {
	Type         string   `json:"type"`
	TargetsCount int      `json:"targetsCount"`
	CheckStatus  string   `json:"checkStatus"`
	Targets      []Target `json:"targets"`

	// overageImageWeight and overageHtmlWeight
	Limit *float64 `json:"limit,omitempty"`
	// overageImageWeight: images looked at, and those whose weight could
	// not be found (listed in ErroredTargets with the reason).
	Evaluated      *int     `json:"evaluated,omitempty"`
	Errored        *int     `json:"errored,omitempty"`
	ErroredTargets []Target `json:"erroredTargets,omitempty"`
	// overageHtmlWeight
	MaxWeight         *float64 `json:"maxWeight,omitempty"`
	DisplayConditions *bool    `json:"displayConditions,omitempty"`
	Processed         *bool    `json:"processed,omitempty"`
}

// Target is one finding: a widget (uuid, widgetType, widgetLabel, locked,
// synced, and weight for an image over the limit), a missing detail
// (detailType), or an HTML weight (weight, beautified).
type Target struct {
	UUID        string   `json:"uuid,omitempty"`
	WidgetType  string   `json:"widgetType,omitempty"`
	WidgetLabel *string  `json:"widgetLabel,omitempty"`
	Locked      *bool    `json:"locked,omitempty"`
	Synced      *bool    `json:"synced,omitempty"`
	Weight      *float64 `json:"weight,omitempty"`
	Beautified  *bool    `json:"beautified,omitempty"`
	DetailType  string   `json:"detailType,omitempty"`
	Reason      string   `json:"reason,omitempty"` // erroredTargets only
}

// Options are the checker's means.
type Options struct {
	// Weigher weighs images for overageImageWeight; without one, every
	// image is reported as errored.
	Weigher Weigher
	// MaxImages bounds the distinct image URLs weighed per request; the
	// others are reported as errored. Default 200.
	MaxImages int
	// Limits bounds the render that overageHtmlWeight weighs, as the
	// service's exports are bounded; past them the check is answered as
	// not processed. Zero: render's defaults.
	Limits render.Limits
}

// Run runs specs on d for every language of langs (as Validate returned
// them). Weighing images honours ctx; nothing else blocks.
func Run(ctx context.Context, d *design.Design, c Collection, specs []Spec, langs []string, opt Options) []LanguageResult {
	widgets := collect(d)
	out := make([]LanguageResult, 0, len(langs))
	for _, lang := range langs {
		lr := LanguageResult{Language: lang, Checks: make([]Result, 0, len(specs))}
		for _, s := range specs {
			if lang != DefaultLanguage && !perLanguage(s.Category) {
				// Page-wide checks are answered once, under "default".
				continue
			}
			var r Result
			switch s.Category {
			case MissingAltText:
				r = widgetCheck(s.Category, StatusWarning, widgets, lang, missingAlt)
			case MissingImageLink:
				r = widgetCheck(s.Category, StatusSuggestion, widgets, lang, missingImageLink)
			case MissingCopyLink:
				r = widgetCheck(s.Category, StatusWarning, widgets, lang, missingCopyLink)
			case OverageImageWeight:
				r = imageWeight(ctx, widgets, *s.Limit, opt)
			case MissingDetailsEmail:
				r = details(s.Category, emailDetails(d))
			case MissingDetailsPage:
				r = details(s.Category, pageDetails(d))
			case OverageHTMLWeight:
				r = htmlWeight(d, *s.Limit, *s.Beautified, opt.Limits)
			}
			lr.add(r)
		}
		out = append(out, lr)
	}
	return out
}

// perLanguage reports whether a check reads the copy that translations
// replace (the vendor answers only these for a language other than the
// default).
func perLanguage(category string) bool {
	return category == MissingAltText || category == MissingImageLink || category == MissingCopyLink
}

// add appends r and counts its targets into the language's totals.
func (lr *LanguageResult) add(r Result) {
	if r.Targets == nil {
		r.Targets = []Target{}
	}
	r.TargetsCount = len(r.Targets)
	if r.TargetsCount == 0 {
		r.CheckStatus = StatusPassed
	}
	lr.Checks = append(lr.Checks, r)
	switch r.CheckStatus {
	case StatusWarning:
		lr.ChecksFailedCount += r.TargetsCount
		lr.ChecksWarningCount += r.TargetsCount
	case StatusSuggestion:
		lr.ChecksFailedCount += r.TargetsCount
		lr.ChecksSuggestionCount += r.TargetsCount
	}
	switch {
	case lr.ChecksWarningCount > 0:
		lr.Status = StatusWarning
	case lr.ChecksSuggestionCount > 0:
		lr.Status = StatusSuggestion
	default:
		lr.Status = StatusPassed
	}
}

// details answers a missing-details check from the names of the missing
// details.
func details(category string, missing []string) Result {
	r := Result{Type: category, CheckStatus: StatusSuggestion}
	for _, m := range missing {
		r.Targets = append(r.Targets, Target{DetailType: m})
	}
	return r
}

func emailDetails(d *design.Design) []string {
	var missing []string
	if strings.TrimSpace(d.Page.Meta.Subject) == "" {
		missing = append(missing, "subject")
	}
	if strings.TrimSpace(d.Page.Meta.Preheader) == "" {
		missing = append(missing, "preheader")
	}
	return missing
}

// pageDetails: a page's title and description, from its head metadata
// (page.head.meta, what the editor's Settings write).
func pageDetails(d *design.Design) []string {
	var missing []string
	if strings.TrimSpace(d.Page.Meta.Title) == "" {
		missing = append(missing, "title")
	}
	if strings.TrimSpace(d.Page.Meta.Description) == "" {
		missing = append(missing, "description")
	}
	return missing
}

// kb converts bytes to KB (1024 bytes), rounded to two decimals as the
// vendor writes weights.
func kb(n int64) float64 {
	return math.Round(float64(n)/1024*100) / 100
}
