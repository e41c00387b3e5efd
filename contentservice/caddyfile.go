package contentservice

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/contract"
	"github.com/designbridge/caddy-designbridge/internal/ratelimit"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("content_service", parseCaddyfile)
	// It answers requests itself, like respond; with pass_thru, the
	// handlers ordered after it (reverse_proxy, file_server) still run.
	httpcaddyfile.RegisterDirectiveOrder("content_service", httpcaddyfile.Before, "respond")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	handler := new(Handler)
	err := handler.UnmarshalCaddyfile(h.Dispenser)
	return handler, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	content_service [<matcher>] {
//		signing_key <key>
//		app <client_id> {
//			secret        <client_secret>
//			token         <api_token>...
//			disabled
//			editor_tokens
//		}
//		max_body   <size>
//		max_output <size>
//		rate_limit <requests> [per] <duration>
//		pass_thru
//		login_failure_limit <failures> [per] <duration> | off
//		fetch off | {
//			allow_private  <ranges...> | all
//			timeout        <duration>
//			total_timeout  <duration>
//			max_size       <size>
//			cache_ttl      <duration>
//			max_images     <n>
//			max_concurrent <n>  # a quarter kept for renders
//		}
//		browser off | {
//			path       <chromium>
//			tabs       <n>
//			timeout    <duration>
//			files_dir  <folder>
//			files_ttl  <duration>
//			public_url <url>
//		}
//	}
//
// signing_key and at least one app are required. app may be repeated, and
// token may be repeated or list several tokens. signing_key and an app's
// id, secret and tokens may be placeholders such as {env.SIGNING_KEY},
// replaced when the config loads; other values are literal. Literal
// values are checked here; placeholders when the config loads.
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		return d.Errf("content_service takes no arguments (got %q); configure it in its block", d.Val())
	}
	seen := make(map[string]bool)
	apps := appsSeen{ids: map[string]bool{}, tokens: map[string]string{}}
	once := func(name string) error {
		if seen[name] {
			return d.Errf("%s given twice", name)
		}
		seen[name] = true
		return nil
	}
	for d.NextBlock(0) {
		name := d.Val()
		switch name {
		case "signing_key":
			if err := once(name); err != nil {
				return err
			}
			key, err := confvalue.OneValue(d, name)
			if err != nil {
				return err
			}
			h.SigningKey = key
			if !confvalue.HasPlaceholder(h.SigningKey) && len(h.SigningKey) < MinSigningKeyLen {
				return d.Errf("signing_key: %d bytes; at least %d are required", len(h.SigningKey), MinSigningKeyLen)
			}
		case "app":
			app, err := unmarshalApp(d, &apps)
			if err != nil {
				return err
			}
			h.Apps = append(h.Apps, app)
		case "max_body":
			if err := once(name); err != nil {
				return err
			}
			v, err := confvalue.OneValue(d, name)
			if err != nil {
				return err
			}
			size, err := parseSize(name, v)
			if err != nil {
				return d.Errf("%v", err)
			}
			h.MaxBody = size
		case "max_output":
			if err := once(name); err != nil {
				return err
			}
			v, err := confvalue.OneValue(d, name)
			if err != nil {
				return err
			}
			size, err := parseSize(name, v)
			if err == nil {
				err = checkMaxOutput(size) // as at load, with the line
			}
			if err != nil {
				return d.Errf("%v", err)
			}
			h.MaxOutput = size
		case "rate_limit":
			if err := once(name); err != nil {
				return err
			}
			n, window, _, err := ratelimit.ParseArgs(d.RemainingArgs(), false)
			if err != nil {
				return d.Errf("rate_limit: %v", err)
			}
			h.RateLimit = &RateLimit{Requests: n, Window: caddy.Duration(window)}
		case "login_failure_limit":
			if err := once(name); err != nil {
				return err
			}
			n, window, off, err := ratelimit.ParseArgs(d.RemainingArgs(), true)
			if err != nil {
				return d.Errf("login_failure_limit: %v", err)
			}
			if off {
				h.NoLoginFailureLimit = true
				if err := confvalue.NoBlock(d, "login_failure_limit off"); err != nil {
					return err
				}
				continue
			}
			h.LoginFailureLimit = &RateLimit{Requests: n, Window: caddy.Duration(window)}
		case "fetch":
			if err := once(name); err != nil {
				return err
			}
			cfg, err := unmarshalFetch(d)
			if err != nil {
				return err
			}
			h.Fetch = cfg
		case "browser":
			if err := once(name); err != nil {
				return err
			}
			cfg, err := unmarshalBrowser(d)
			if err != nil {
				return err
			}
			h.Browser = cfg
		case "pass_thru":
			if err := once(name); err != nil {
				return err
			}
			if err := confvalue.Flag(d, name); err != nil {
				return err
			}
			h.PassThru = true
		default:
			return d.Errf("unrecognized content_service subdirective %q", name)
		}
		if name != "app" && name != "fetch" && name != "browser" {
			if err := confvalue.NoBlock(d, name); err != nil {
				return err
			}
		}
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

// appsSeen holds the literal client IDs, and tokens with the client ID
// of their app, of the app blocks read so far, so that a repeated one is
// named with its line; those from placeholders are the load's to compare.
type appsSeen struct {
	ids    map[string]bool
	tokens map[string]string
}

// unmarshalApp reads one app block; the dispenser is on "app".
func unmarshalApp(d *caddyfile.Dispenser, apps *appsSeen) (App, error) {
	var app App
	if !d.NextArg() {
		return app, d.Errf("app: missing client ID (app <client_id> { … })")
	}
	app.ClientID = d.Val()
	if !confvalue.HasPlaceholder(app.ClientID) {
		if apps.ids[app.ClientID] {
			return app, d.Errf("app %q given twice", app.ClientID)
		}
		apps.ids[app.ClientID] = true
	}
	if d.NextArg() {
		return app, d.Errf("app %q: unexpected argument %q; the secret goes in the block", app.ClientID, d.Val())
	}
	seen := make(map[string]bool)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		name := d.Val()
		if name != "token" && seen[name] {
			return app, d.Errf("app %q: %s given twice", app.ClientID, name)
		}
		seen[name] = true
		switch name {
		case "secret":
			secret, err := confvalue.OneValue(d, fmt.Sprintf("app %q: secret", app.ClientID))
			if err != nil {
				return app, err
			}
			app.ClientSecret = secret
			if !confvalue.HasPlaceholder(app.ClientSecret) {
				if err := checkSecretLen("client_secret", app.ClientSecret); err != nil {
					return app, d.Errf("app %q: secret: %v", app.ClientID, err)
				}
			}
		case "token":
			tokens := d.RemainingArgs()
			if len(tokens) == 0 {
				return app, confvalue.NoValue(d, fmt.Sprintf("app %q: token", app.ClientID))
			}
			for _, raw := range tokens {
				if !confvalue.HasPlaceholder(raw) {
					// As the load checks it; the token is never quoted.
					n := len(app.Tokens) + 1
					tok, err := contract.Token(raw)
					if err == nil {
						err = checkSecretLen("token", tok)
					}
					if err != nil {
						return app, d.Errf("app %q: token #%d: %v", app.ClientID, n, err)
					}
					if other, dup := apps.tokens[tok]; dup {
						return app, d.Errf("app %q: token #%d is also configured for app %q", app.ClientID, n, other)
					}
					apps.tokens[tok] = app.ClientID
				}
				app.Tokens = append(app.Tokens, raw)
			}
		case "disabled":
			if err := confvalue.Flag(d, fmt.Sprintf("app %q: disabled", app.ClientID)); err != nil {
				return app, err
			}
			app.Disabled = true
		case "editor_tokens":
			if err := confvalue.Flag(d, fmt.Sprintf("app %q: editor_tokens", app.ClientID)); err != nil {
				return app, err
			}
			app.EditorTokens = true
		default:
			return app, d.Errf("app %q: unrecognized subdirective %q", app.ClientID, name)
		}
		if err := confvalue.NoBlock(d, fmt.Sprintf("app %q: %s", app.ClientID, name)); err != nil {
			return app, err
		}
	}
	if app.ClientSecret == "" {
		return app, d.Errf("app %q: secret is required", app.ClientID)
	}
	return app, nil
}

// Interface guard
var _ caddyfile.Unmarshaler = (*Handler)(nil)

// readOffOrBlock reads a subdirective that is either "<name> off" (off is
// true) or a block of "<setting> <value>" lines, each setting at most once;
// the settings in valued take one value, which set stores or says what is
// wrong with; those in listed take their line's arguments, however many,
// which their function reads. An unknown setting is refused before its
// values are counted, so the error names it rather than a miscounted
// line. The dispenser is on name.
func readOffOrBlock(d *caddyfile.Dispenser, name string, listed map[string]func(args []string) error, valued []string, set func(setting, val string) error) (off bool, err error) {
	if d.NextArg() {
		if d.Val() != "off" || d.NextArg() {
			return false, d.Errf("%s: the only argument is off (got %q)", name, d.Val())
		}
		return true, confvalue.NoBlock(d, name+" off")
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		setting := d.Val()
		readArgs, isListed := listed[setting]
		if !isListed && !slices.Contains(valued, setting) {
			return false, d.Errf("%s: %v", name, errUnknownSetting(setting))
		}
		if seen[setting] {
			return false, d.Errf("%s: %s given twice", name, setting)
		}
		seen[setting] = true
		if isListed {
			err = readArgs(d.RemainingArgs())
		} else {
			var val string
			if val, err = confvalue.OneValue(d, name+": "+setting); err != nil {
				return false, err
			}
			err = set(setting, val)
		}
		if err != nil {
			return false, d.Errf("%s: %v", name, err)
		}
		if err := confvalue.NoBlock(d, name+": "+setting); err != nil {
			return false, err
		}
	}
	return false, nil
}

// errUnknownSetting is set's answer to a setting it does not know.
func errUnknownSetting(setting string) error {
	return fmt.Errorf("unrecognized subdirective %q", setting)
}

// parseSize reads a setting's byte size. confvalue.Size's message asks
// for a whole number, yet 1.5MiB is a size it reads.
func parseSize(setting, val string) (int64, error) {
	size, err := confvalue.Size(val)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a size from 1 byte to 1TiB: write a number of bytes with an optional unit, such as 4MiB, 1.5MB or 1048576", setting, val)
	}
	return size, nil
}

// positiveDuration reads a setting's positive duration.
func positiveDuration(setting, val, example string) (caddy.Duration, error) {
	dur, err := caddy.ParseDuration(val)
	if err != nil || dur <= 0 {
		return 0, fmt.Errorf("%s %q: a positive duration such as %s", setting, val, example)
	}
	return caddy.Duration(dur), nil
}

// positiveCount reads a setting's positive whole number.
func positiveCount(setting, val string) (int, error) {
	n, err := strconv.Atoi(val)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s %q: a positive number", setting, val)
	}
	return n, nil
}
