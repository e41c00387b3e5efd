package contentservice

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/designbridge/caddy-designbridge/designcheck"
	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

// Defaults of FetchConfig.
const (
	DefaultFetchTimeout      = 10 * time.Second
	DefaultFetchTotalTimeout = 30 * time.Second
	DefaultFetchMaxSize      = 20 << 20
	DefaultFetchCacheTTL     = 10 * time.Minute
	DefaultFetchMaxImages    = 200
	// DefaultFetchMaxConcurrent lets 6 checks weigh 4 images each at
	// once, with 8 slots kept for renders (renderShare); further fetches
	// wait rather than open more connections.
	DefaultFetchMaxConcurrent = 32
	// fetchCacheEntries bounds the image weights remembered.
	fetchCacheEntries = 4096
)

// FetchConfig bounds how the service fetches the images a design or an
// HTML export points at (the Check API's image weights, the images of PDF
// and image exports). It never connects to a private,
// loopback or link-local address (checked on the address dialled, after
// DNS and on every redirect) unless AllowPrivate is set or PrivateRanges
// list it.
type FetchConfig struct {
	// AllowPrivate lets image URLs reach every private, loopback and
	// link-local address, Caddy's admin endpoint included (never cloud
	// metadata). Off by default: a design is untrusted input. To reach an
	// internal image host, list its range in PrivateRanges instead. The
	// Caddyfile's "allow_private all".
	AllowPrivate bool `json:"allow_private,omitempty"`

	// PrivateRanges are the only non-public addresses image URLs may
	// reach: CIDR ranges such as "10.0.0.0/8" or "fd00::/8", or single
	// addresses such as "192.168.1.7", as Caddy's trusted_proxies takes
	// them. Public addresses stay reachable. Not together with
	// AllowPrivate, which allows every address already.
	PrivateRanges []string `json:"private_ranges,omitempty"`

	// Timeout bounds one image, redirects included. Default: 10s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// TotalTimeout bounds all the fetches of one request; images not
	// weighed by then are reported as not fetched. Default: 30s.
	TotalTimeout caddy.Duration `json:"total_timeout,omitempty"`

	// MaxSize is the most bytes read of an image: one shown in a render,
	// or weighed by a check when a HEAD request does not tell its size
	// (the Caddyfile takes sizes such as 20MiB). Default: 20 MiB.
	MaxSize int64 `json:"max_size,omitempty"`

	// CacheTTL is how long an image's weight is remembered (a failure:
	// a tenth of it). Default: 10m.
	CacheTTL caddy.Duration `json:"cache_ttl,omitempty"`

	// MaxImages bounds the distinct image URLs fetched for one request,
	// a check or a PDF or image render: a check reports the others as
	// not fetched, a render leaves them out. Either also sends at most 4
	// HTTP requests per image of MaxImages, every redirect counted.
	// Default: 200.
	MaxImages int `json:"max_images,omitempty"`

	// MaxConcurrent bounds the images fetched at once by the whole
	// handler: every check and every PDF or image render share it (one
	// request weighs up to 4 at a time, a render fetches up to 4). While
	// PDF and image exports are on, a quarter of the slots (at least
	// one) is kept for renders and as many for checks: neither together
	// ever holds more than the rest, so slow checks cannot hold up
	// renders nor slow renders checks. An image waits for its turn while its request lasts; a
	// check reports those not weighed by total_timeout as not fetched
	// ("timed out"). At least 2 unless the browser is off. Default: 32
	// (checks or renders hold at most 24, 8 stay for the other).
	MaxConcurrent int `json:"max_concurrent,omitempty"`

	// Off turns image fetching off: checks report every image as not
	// weighed, renders show none (the Caddyfile's "fetch off").
	Off bool `json:"off,omitempty"`
}

// fetchSettings is a FetchConfig with its defaults applied.
type fetchSettings struct {
	off          bool
	policy       safefetch.Policy
	timeout      time.Duration
	totalTimeout time.Duration
	maxSize      int64
	maxImages    int
	// slots bounds the fetches in flight, taken by the render fetcher
	// and, through checkSlots, by the weigher; this handler's own, so a
	// reload starts afresh.
	slots *safefetch.Slots
	// checkSlots and renderSlots are the shares of slots that checks and
	// renders may hold: all of them without renders, else all but
	// renderShare, so that either keeps that many for the other.
	checkSlots, renderSlots *safefetch.Slots
}

// renderShare is the number of max_concurrent's n fetch slots kept for
// renders: a quarter, at least one.
func renderShare(n int) int { return max(1, n/4) }

// setupFetch resolves cfg (nil for the defaults) into the service;
// renders tells whether PDF and image exports are on (a share of the
// slots is then kept for them).
func (s *service) setupFetch(cfg *FetchConfig, renders bool) error {
	if cfg == nil {
		cfg = &FetchConfig{}
	}
	timeout, total, ttl := time.Duration(cfg.Timeout), time.Duration(cfg.TotalTimeout), time.Duration(cfg.CacheTTL)
	switch {
	case timeout < 0:
		return fmt.Errorf("fetch.timeout must be positive")
	case total < 0:
		return fmt.Errorf("fetch.total_timeout must be positive")
	case ttl < 0:
		return fmt.Errorf("fetch.cache_ttl must not be negative")
	case cfg.MaxSize < 0:
		return fmt.Errorf("fetch.max_size must be positive")
	case cfg.MaxImages < 0:
		return fmt.Errorf("fetch.max_images must be positive")
	case cfg.MaxConcurrent < 0:
		return fmt.Errorf("fetch.max_concurrent must be positive")
	}
	if timeout == 0 {
		timeout = DefaultFetchTimeout
	}
	if total == 0 {
		total = DefaultFetchTotalTimeout
	}
	if ttl == 0 {
		ttl = DefaultFetchCacheTTL
	}
	policy, err := fetchPolicy(cfg)
	if err != nil {
		return err
	}
	maxSize := cfg.MaxSize
	if maxSize == 0 {
		maxSize = DefaultFetchMaxSize
	}
	s.fetch = fetchSettings{off: cfg.Off, policy: policy, timeout: timeout,
		totalTimeout: total, maxSize: maxSize, maxImages: cfg.MaxImages}
	if s.fetch.maxImages == 0 {
		s.fetch.maxImages = DefaultFetchMaxImages
	}
	if !cfg.Off {
		n := cfg.MaxConcurrent
		if n == 0 {
			n = DefaultFetchMaxConcurrent
		}
		checks := n
		if renders {
			if checks -= renderShare(n); checks < 1 {
				return fmt.Errorf("fetch.max_concurrent %d: at least 2 while PDF and image exports are on, "+
					"since a quarter of the slots (at least one) is kept for renders; or turn the browser off", n)
			}
		}
		s.fetch.slots = safefetch.NewSlots(n)
		s.fetch.checkSlots = s.fetch.slots.Within(checks)
		s.fetch.renderSlots = s.fetch.slots.Within(checks)
		s.weigher = designcheck.NewHTTPWeigher(designcheck.WeigherConfig{
			Timeout: timeout, MaxSize: maxSize, Policy: policy,
			CacheTTL: ttl, MaxCached: fetchCacheEntries, Slots: s.fetch.checkSlots,
		})
	}
	if cfg.AllowPrivate && s.logger != nil {
		s.logger.Warn("fetch allow_private: design image URLs may reach every private, loopback and link-local address, " +
			"such as Caddy's admin endpoint; list only the ranges needed (allow_private <ranges...>)")
	}
	return nil
}

// fetchPolicy reads the non-public addresses cfg allows.
func fetchPolicy(cfg *FetchConfig) (safefetch.Policy, error) {
	p := safefetch.Policy{AllowPrivate: cfg.AllowPrivate}
	if cfg.AllowPrivate && len(cfg.PrivateRanges) > 0 {
		return p, fmt.Errorf("fetch.private_ranges: allow_private already allows every address; set one of them (the Caddyfile's \"allow_private <ranges>\" sets private_ranges only)")
	}
	for i, s := range cfg.PrivateRanges {
		r, err := safefetch.ParseRange(s)
		if err != nil {
			return p, fmt.Errorf("fetch.private_ranges[%d]: %v", i, err)
		}
		p.Ranges = append(p.Ranges, r)
	}
	return p, nil
}

// Interface guard
var _ caddy.CleanerUpper = (*Handler)(nil)

// Cleanup stops the browser (waiting for it and everything it started),
// releases the service's outgoing connections and gives back its share
// of the login failure limiter.
func (h *Handler) Cleanup() error {
	if h.svc == nil {
		return nil
	}
	if h.svc.browser != nil {
		h.svc.browser.Close()
		h.svc.browserTransport.Retire()
	}
	if h.svc.weigher != nil {
		h.svc.weigher.Close()
	}
	h.svc.releaseFailures()
	return nil
}

// unmarshalFetch reads the fetch block; the dispenser is on "fetch".
//
//	fetch off
//	fetch {
//		allow_private  <ranges...> | all
//		timeout        <duration>
//		total_timeout  <duration>
//		max_size       <size>
//		cache_ttl      <duration>
//		max_images     <n>
//		max_concurrent <n>  # a quarter kept for renders
//	}
func unmarshalFetch(d *caddyfile.Dispenser) (*FetchConfig, error) {
	cfg := new(FetchConfig)
	valued := []string{"timeout", "total_timeout", "cache_ttl", "max_size", "max_images", "max_concurrent"}
	listed := map[string]func([]string) error{
		"allow_private": func(args []string) (err error) {
			if cfg.AllowPrivate, cfg.PrivateRanges, err = safefetch.ParseAllowPrivate(args); err != nil {
				err = fmt.Errorf("allow_private: %v", err)
			}
			return err
		},
	}
	off, err := readOffOrBlock(d, "fetch", listed, valued, func(setting, val string) (err error) {
		switch setting {
		case "timeout":
			cfg.Timeout, err = positiveDuration(setting, val, "10s")
		case "total_timeout":
			cfg.TotalTimeout, err = positiveDuration(setting, val, "30s")
		case "cache_ttl":
			cfg.CacheTTL, err = positiveDuration(setting, val, "10m")
		case "max_size":
			if cfg.MaxSize, err = confvalue.Size(val); err != nil {
				err = fmt.Errorf("max_size %q: a positive size such as 20MiB", val)
			}
		case "max_images":
			cfg.MaxImages, err = positiveCount(setting, val)
		case "max_concurrent":
			cfg.MaxConcurrent, err = positiveCount(setting, val)
		default:
			err = errUnknownSetting(setting)
		}
		return err
	})
	cfg.Off = off
	return cfg, err
}
