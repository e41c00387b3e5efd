package designbridge

// The Caddyfile syntax of design_bridge.

import (
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/ratelimit"
)

// parseAuthRateLimit reads "auth_rate_limit <requests> [per] <duration>"
// or "auth_rate_limit off"; the dispenser is on the subdirective's name.
func parseAuthRateLimit(d *caddyfile.Dispenser) (*AuthRateLimit, error) {
	n, window, off, err := ratelimit.ParseArgs(d.RemainingArgs(), true)
	if err != nil {
		return nil, d.Errf("auth_rate_limit: %v", err)
	}
	if off {
		return &AuthRateLimit{Off: true}, nil
	}
	return &AuthRateLimit{Requests: n, Window: caddy.Duration(window)}, nil
}

// parseCacheCaddyfile reads the cache subdirective:
//
//	cache [<max_size> [<ttl>]]
//	cache {
//		max_size <size>
//		ttl      <duration>
//	}
func parseCacheCaddyfile(d *caddyfile.Dispenser) (*ExportCache, error) {
	c := new(ExportCache)
	seen := map[string]bool{}
	set := func(name, v string) error {
		if seen[name] {
			return d.Errf("cache: %s given twice (on the cache line or in its block)", name)
		}
		seen[name] = true
		switch name {
		case "max_size":
			size, err := confvalue.Size(v)
			if err != nil {
				return d.Errf("cache max_size: %v", err)
			}
			c.MaxSize = size
		case "ttl":
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("cache ttl: %q is not a positive duration", v)
			}
			c.TTL = caddy.Duration(dur)
		default:
			return d.Errf("cache: unrecognized subdirective %q", name)
		}
		return nil
	}
	args := d.RemainingArgs()
	if len(args) > 2 {
		return nil, d.Errf("cache: at most <max_size> and <ttl>, got extra %q", args[2])
	}
	for i, name := range []string{"max_size", "ttl"}[:len(args)] {
		if err := set(name, args[i]); err != nil {
			return nil, err
		}
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		name := d.Val()
		if name != "max_size" && name != "ttl" {
			return nil, d.Errf("cache: unrecognized subdirective %q", name)
		}
		v, err := confvalue.OneValue(d, "cache "+name)
		if err != nil {
			return nil, err
		}
		if err := set(name, v); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// parseCaddyfile sets up the handler from Caddyfile tokens. It refuses a
// matcher: the handler acts only on its own paths, so a matcher could only
// hide some of them (design_bridge /v1/* would leave /proxy/bee-auth to
// file_server) and break the editor without a word.
func parseCaddyfile(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	h.Next() // directive name
	var first string
	if h.NextArg() {
		first = h.Val()
	}
	h.Reset()
	h.Next()
	matcherSet, err := h.ExtractMatcherSet()
	if err != nil {
		return nil, err
	}
	if matcherSet != nil {
		h.Next() // so that the error names the directive's line
		return nil, h.Errf("design_bridge takes no matcher (got %q): it acts only on its export paths and auth_path and passes every other request on, "+
			"so a matcher can only hide some of them (such as %s) from it; to limit it on purpose, wrap it: route <matcher> { design_bridge … }", first, DefaultAuthPath)
	}
	b := new(Bridge)
	if err := b.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return h.NewRoute(nil, b), nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	design_bridge {
//		content_service <base URL>
//		token           <CS API token>
//		client_id       <LoginV2 client id>
//		client_secret   <LoginV2 client secret>
//		auth_url        <LoginV2 URL>
//		uid             <placeholder or literal>
//		insecure_caller_uid
//		export_paths    <paths...>
//		auth_path       <path>
//		max_body        <size>
//		large_body_memory <size> | off
//		answer_memory   <size>
//		timeout         <duration>
//		unwrap_html
//		allowed_origins <origins...>
//		forward_headers <names...>
//		insecure_http
//		cache           [<max_size> [<ttl>]]
//		auth_rate_limit <requests> [per] <duration> | off
//	}
//
// The directive takes no arguments and refuses a matcher: it acts only on
// its export and auth paths and passes everything else on. To limit it on
// purpose, wrap it in route <matcher> { … }.
func (b *Bridge) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		return d.Errf("design_bridge takes no argument (got %q); its settings go in its block, such as content_service <base URL>", d.Val())
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		name := d.Val()
		if seen[name] {
			return d.Errf("%s specified more than once", name)
		}
		seen[name] = true
		switch name {
		case "content_service", "token", "client_id", "client_secret", "auth_url", "uid", "auth_path":
			args := d.RemainingArgs()
			// {$CS_API_TOKEN} holding "Bearer <token>" is split at the space
			// by the Caddyfile lexer; take it back together.
			if name == "token" && len(args) == 2 && strings.EqualFold(args[0], "Bearer") {
				args = []string{args[0] + " " + args[1]}
			}
			if len(args) == 0 {
				return confvalue.NoValue(d, name)
			}
			if len(args) != 1 {
				return d.Errf("%s: one value, got extra %q", name, args[1])
			}
			v := args[0]
			if v == "" {
				return d.Errf("%s: empty value", name)
			}
			switch name {
			case "content_service":
				b.ContentService = v
			case "token":
				b.Token = v
			case "client_id":
				b.ClientID = v
			case "client_secret":
				b.ClientSecret = v
			case "auth_url":
				b.AuthURL = v
			case "uid":
				b.UID = v
			case "auth_path":
				if !strings.HasPrefix(v, "/") {
					return d.Errf("auth_path %q must start with /", v)
				}
				b.AuthPath = v
			}
		case "export_paths", "allowed_origins", "forward_headers":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return confvalue.NoValue(d, name)
			}
			for _, a := range args {
				if name == "export_paths" && !strings.HasPrefix(a, "/") {
					return d.Errf("export_paths: %q must start with /", a)
				}
				if name != "forward_headers" {
					continue
				}
				if why := forwardRefusal(a); why != "" {
					return d.Errf("forward_headers: %q %s", a, why)
				}
			}
			switch name {
			case "export_paths":
				b.ExportPaths = args
			case "allowed_origins":
				b.AllowedOrigins = args
			default:
				b.ForwardHeaders = args
			}
		case "max_body", "large_body_memory", "answer_memory":
			v, err := confvalue.OneValue(d, name)
			if err != nil {
				return err
			}
			if name == "large_body_memory" && (v == "off" || v == "0") {
				b.LargeBodyMemory = -1
				break
			}
			size, err := confvalue.Size(v)
			if err != nil {
				return d.Errf("%s: %v", name, err)
			}
			switch name {
			case "max_body":
				b.MaxBody = size
			case "large_body_memory":
				b.LargeBodyMemory = size
			default:
				if size < maxSharedAnswer {
					return d.Errf("answer_memory: %q is less than 64MiB, the largest answer an export may have", v)
				}
				b.AnswerMemory = size
			}
		case "timeout":
			v, err := confvalue.OneValue(d, name)
			if err != nil {
				return err
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil {
				return d.Errf("timeout: parsing %q: %v", v, err)
			}
			if dur <= 0 {
				return d.Errf("timeout: %q must be positive", v)
			}
			b.Timeout = caddy.Duration(dur)
		case "cache":
			c, err := parseCacheCaddyfile(d)
			if err != nil {
				return err
			}
			b.Cache = c
		case "unwrap_html", "insecure_http", "insecure_caller_uid":
			if err := confvalue.Flag(d, name); err != nil {
				return err
			}
			switch name {
			case "unwrap_html":
				b.UnwrapHTML = true
			case "insecure_http":
				b.InsecureHTTP = true
			default:
				b.InsecureCallerUID = true
			}
		case "auth_rate_limit":
			rl, err := parseAuthRateLimit(d)
			if err != nil {
				return err
			}
			b.AuthRateLimit = rl
		default:
			return d.Errf("unrecognized subdirective %q", name)
		}
	}
	return nil
}
