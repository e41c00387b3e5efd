package fsp

import (
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	fsp [<matcher>] {
//	    local <folder>
//	    s3 {
//	        endpoint   <host:port>
//	        bucket     <name>
//	        prefix     <key prefix>
//	        region     <region>
//	        access_key <id>
//	        secret_key <secret>
//	        insecure
//	        timeout    <duration>
//	    }
//	    root          <template>
//	    public_url    <base URL>
//	    shared        <name> <storage path>
//	    max_size      <size>
//	    fetch_timeout <duration>
//	    max_uploads   <number>
//	    max_image_memory <size>
//	    min_upload_rate  <size per second>
//	    allow_types   <media type>...
//	    allow_private <ranges...> | all
//	    allow_anonymous
//	}
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		// Caddy has taken a matcher (a path, * or @name) already.
		return d.Errf("fsp takes no argument besides a matcher (got %q); a folder goes in its block: local <folder>", d.Val())
	}
	// Every subdirective but shared and allow_types holds one value: a
	// second one would silently replace the first.
	seen := map[string]bool{}
	for d.NextBlock(0) {
		sub := d.Val()
		if sub != "shared" && sub != "allow_types" {
			if seen[sub] {
				return d.Errf("fsp: %s given twice", sub)
			}
			seen[sub] = true
		}
		switch sub {
		case "local":
			if h.Local != nil || h.S3 != nil {
				return d.Errf("fsp: %s: storage already specified; give one of local and s3", sub)
			}
			folder, err := confvalue.OneValue(d, "fsp: local")
			if err != nil {
				return err
			}
			h.Local = &LocalConfig{Folder: folder}
		case "s3":
			if h.Local != nil || h.S3 != nil {
				return d.Errf("fsp: %s: storage already specified; give one of local and s3", sub)
			}
			if err := confvalue.Flag(d, "fsp: s3"); err != nil {
				return err
			}
			h.S3 = new(S3Config)
			if err := h.S3.unmarshal(d); err != nil {
				return err
			}
		case "root", "public_url":
			target := &h.Root
			if sub == "public_url" {
				target = &h.PublicURL
			}
			v, err := confvalue.OneValue(d, "fsp: "+sub)
			if err != nil {
				return err
			}
			*target = v
		case "shared":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return d.Errf("fsp: shared: want <name> <storage path>, got %d value(s)", len(args))
			}
			h.Shared = append(h.Shared, SharedFolder{Name: args[0], Key: args[1]})
		case "max_size":
			v, err := confvalue.OneValue(d, "fsp: max_size")
			if err != nil {
				return err
			}
			size, err := confvalue.Size(v)
			if err != nil || size > maxMaxSize {
				return d.Errf("fsp: max_size %q: a size such as 20MB, at most 4GiB", v)
			}
			h.MaxSize = size
		case "min_upload_rate":
			v, err := confvalue.OneValue(d, "fsp: min_upload_rate")
			if err != nil {
				return err
			}
			size, err := confvalue.Size(strings.TrimSuffix(v, "/s"))
			if err != nil {
				return d.Errf("fsp: min_upload_rate %q: a size per second such as 10KiB/s", v)
			}
			h.MinUploadRate = size
		case "max_image_memory":
			v, err := confvalue.OneValue(d, "fsp: max_image_memory")
			if err != nil {
				return err
			}
			size, err := confvalue.Size(v)
			if err != nil || size <= 0 {
				return d.Errf("fsp: max_image_memory %q: a size such as 64MiB", v)
			}
			h.MaxImageMemory = size
		case "fetch_timeout":
			v, err := confvalue.OneValue(d, "fsp: fetch_timeout")
			if err != nil {
				return err
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("fsp: fetch_timeout %q: a positive duration such as 30s", v)
			}
			h.FetchTimeout = caddy.Duration(dur)
		case "max_uploads":
			v, err := confvalue.OneValue(d, "fsp: max_uploads")
			if err != nil {
				return err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return d.Errf("fsp: max_uploads %q: a positive number", v)
			}
			h.MaxUploads = n
		case "allow_types":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return confvalue.NoValue(d, "fsp: allow_types")
			}
			h.AllowTypes = append(h.AllowTypes, args...)
		case "allow_private":
			all, ranges, err := safefetch.ParseAllowPrivate(d.RemainingArgs())
			if err != nil {
				return d.Errf("fsp: allow_private: %v", err)
			}
			h.AllowPrivate, h.PrivateRanges = all, ranges
		case "allow_anonymous":
			if err := confvalue.Flag(d, "fsp: "+sub); err != nil {
				return err
			}
			h.AllowAnonymous = true
		default:
			return d.Errf("fsp: unrecognized subdirective %q", sub)
		}
		if sub != "s3" {
			if err := confvalue.NoBlock(d, "fsp: "+sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseDirective is what RegisterHandlerDirective would do, and also
// looks at the matcher token: Caddy reads a path right after fsp as a
// path matcher, so "fsp /srv/fsp" meant to name the folder would give
// a handler without storage and a matcher no request of the file manager
// passes.
func parseDirective(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	if !h.Next() {
		return nil, h.ArgErr()
	}
	var path string
	if h.NextArg() && strings.HasPrefix(h.Val(), "/") {
		path = h.Val()
	}
	h.Reset()
	h.Next()
	matcherSet, err := h.ExtractMatcherSet()
	if err != nil {
		return nil, err
	}
	fh := new(Handler)
	if err := fh.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	if path != "" && fh.Local == nil && fh.S3 == nil {
		h.Reset()
		h.Next() // the error names the directive's line
		return nil, h.Errf("fsp: no storage, and %q right after fsp is a request matcher (a path), not the folder: fsp takes no argument; give the folder in its block as local %s", path, path)
	}
	return h.NewRoute(matcherSet, fh), nil
}
