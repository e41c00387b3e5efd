package designbridge

// Refusing cross-site calls of the export and auth paths.

import (
	"net/http"
	"strconv"
	"strings"
)

// crossSite returns why r must be refused as a cross-site call, or "".
// An Origin listed in allowed_origins is always accepted; otherwise the
// browser's Sec-Fetch-Site verdict decides (only same-origin and none
// pass), and without it the Origin must be the site's own. Requests with neither header are not from a browser
// page (curl, server-to-server) and cannot carry a victim's cookies, so
// they pass.
func (b *Bridge) crossSite(r *http.Request) string {
	origin := normalizeOrigin(r.Header.Get("Origin"))
	if origin != "" {
		if _, ok := b.allowed[origin]; ok {
			return ""
		}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		switch strings.ToLower(site) {
		case "same-origin", "none": // "none": the user's own navigation
			return ""
		}
		// same-site is another origin (another port, another subdomain)
		// all the same; a value we do not know may be no better.
		return "Sec-Fetch-Site is " + strconv.Quote(truncate(site, 32)) + " and the Origin is not in allowed_origins"
	}
	if origin == "" {
		return ""
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if origin == strings.ToLower(scheme+"://"+r.Host) {
		return ""
	}
	return "Origin " + origin + " is neither this site's origin nor in allowed_origins"
}

// normalizeOrigin lowercases an origin and drops a trailing slash.
func normalizeOrigin(s string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), "/"))
}
