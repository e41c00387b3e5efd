package contentservice

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/browserpool"
	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

// Defaults of BrowserConfig.
const (
	DefaultChromium       = "/usr/bin/chromium"
	DefaultBrowserTabs    = 2
	DefaultBrowserTimeout = 30 * time.Second
	DefaultFilesTTL       = 24 * time.Hour
)

// BrowserConfig configures the PDF and image exports, which headless
// Chromium renders (started with the first such export).
type BrowserConfig struct {
	// Off turns the PDF and image endpoints off: they answer 501, and
	// Chromium need not be installed.
	Off bool `json:"off,omitempty"`

	// Path is the Chromium binary. Default: /usr/bin/chromium. Missing is
	// a load error unless Off.
	Path string `json:"path,omitempty"`

	// Tabs bounds the renders running at once; others wait (within
	// Timeout), at most four per tab: past those, a render is answered
	// 503 at once, with Retry-After. Default: 2.
	Tabs int `json:"tabs,omitempty"`

	// Timeout bounds one render, and apart from it the wait for a tab.
	// Default: 30s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// FilesDir holds the PDFs until they expire. Default: a folder in
	// Caddy's data directory.
	FilesDir string `json:"files_dir,omitempty"`

	// FilesTTL is how long a PDF stays downloadable. Default: 24h.
	FilesTTL caddy.Duration `json:"files_ttl,omitempty"`

	// PublicURL is the base URL the PDF links start with (where clients
	// reach this service, e.g. through design_bridge); "/v1/files/…" is
	// appended. Default: the scheme and host of the request.
	PublicURL string `json:"public_url,omitempty"`
}

// setupBrowser resolves cfg (nil for the defaults) into the service.
func (s *service) setupBrowser(cfg *BrowserConfig) error {
	if cfg == nil {
		cfg = &BrowserConfig{}
	}
	if cfg.Off {
		return nil
	}
	path := cfg.Path
	if path == "" {
		path = DefaultChromium
	}
	if _, err := exec.LookPath(path); err != nil {
		// browserpool.Check would say the same without the Caddyfile line
		// that turns the exports off.
		return fmt.Errorf(`browser.path: chromium not found at %q: %v (install chromium, give its path with "path <chromium>" in the browser block, or turn the PDF and image endpoints off with the line "browser off" in the content_service block; JSON: "browser": {"off": true})`, path, err)
	}
	if err := browserpool.Check(path); err != nil {
		return fmt.Errorf("browser.path: %v", err)
	}
	tabs, timeout, ttl := cfg.Tabs, time.Duration(cfg.Timeout), time.Duration(cfg.FilesTTL)
	switch {
	case tabs < 0:
		return fmt.Errorf("browser.tabs must be positive")
	case tabs > browserpool.MaxTabs:
		return fmt.Errorf("browser.tabs: %d; at most %d", tabs, browserpool.MaxTabs)
	case timeout < 0:
		return fmt.Errorf("browser.timeout must be positive")
	case ttl < 0:
		return fmt.Errorf("browser.files_ttl must be positive")
	}
	if tabs == 0 {
		tabs = DefaultBrowserTabs
	}
	if timeout == 0 {
		timeout = DefaultBrowserTimeout
	}
	if ttl == 0 {
		ttl = DefaultFilesTTL
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			// Not quoted: a URL may carry credentials.
			return fmt.Errorf("browser.public_url: write an http(s) URL without query or fragment, such as https://example.com/cs")
		}
	}
	dir := cfg.FilesDir
	if dir == "" {
		dir = filepath.Join(caddy.AppDataDir(), "content_service", "files")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("browser.files_dir: %v", err)
	}
	// The files' names are their links' permission: a user who can list
	// the folder can download every PDF in it over HTTP.
	if info, err := os.Stat(dir); err == nil && info.Mode().Perm()&0o044 != 0 && s.logger != nil {
		s.logger.Warn("browser.files_dir can be listed by other users of this machine, and its file names are the PDF links: "+
			"make it readable by Caddy's user only (chmod 700)",
			zap.String("files_dir", dir), zap.String("mode", info.Mode().Perm().String()))
	}
	client, transport := safefetch.NewClient(s.fetch.timeout, s.fetch.policy)
	var fetcher browserpool.Fetcher = &browserpool.HTTPFetcher{Client: client, MaxSize: s.fetch.maxSize, Slots: s.fetch.renderSlots}
	if s.fetch.off {
		fetcher = noImages{}
	}
	pool, err := browserpool.New(browserpool.Config{
		ExecPath: path, Tabs: tabs, JobTimeout: timeout,
		Fetch:     fetcher,
		MaxImages: s.fetch.maxImages, Logger: s.logger,
	})
	if err != nil {
		transport.Retire()
		return fmt.Errorf("browser: %v", err)
	}
	s.browser = pool
	s.browserTimeout = timeout
	s.browserTransport = transport
	s.files = newFileStore(dir, ttl, timeout)
	// Stores sweep the folder; so does each load, as none may follow.
	s.files.sweep("")
	s.publicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	return nil
}

// unmarshalBrowser reads the browser block; the dispenser is on
// "browser".
//
//	browser off
//	browser {
//		path       <chromium>
//		tabs       <n>
//		timeout    <duration>
//		files_dir  <folder>
//		files_ttl  <duration>
//		public_url <url>
//	}
func unmarshalBrowser(d *caddyfile.Dispenser) (*BrowserConfig, error) {
	cfg := new(BrowserConfig)
	valued := []string{"path", "files_dir", "public_url", "tabs", "timeout", "files_ttl"}
	off, err := readOffOrBlock(d, "browser", nil, valued, func(setting, val string) (err error) {
		switch setting {
		case "path":
			cfg.Path = val
		case "files_dir":
			cfg.FilesDir = val
		case "public_url":
			cfg.PublicURL = val
		case "tabs":
			cfg.Tabs, err = positiveCount(setting, val)
		case "timeout":
			cfg.Timeout, err = positiveDuration(setting, val, "30s")
		case "files_ttl":
			cfg.FilesTTL, err = positiveDuration(setting, val, "24h")
		default:
			err = errUnknownSetting(setting)
		}
		return err
	})
	cfg.Off = off
	return cfg, err
}
