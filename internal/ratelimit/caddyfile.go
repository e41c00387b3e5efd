package ratelimit

import (
	"fmt"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
)

// ParseArgs reads a limit as every module's Caddyfile writes it:
// "<requests> [per] <duration>", or "off" where offOK (then off is true).
// The JSON config holds numbers, so a runtime placeholder cannot stand
// for them; {$VAR} is replaced when the Caddyfile is adapted. Messages
// name the offending argument; callers put the subdirective before them.
func ParseArgs(args []string, offOK bool) (requests int, window time.Duration, off bool, err error) {
	if offOK && len(args) == 1 && args[0] == "off" {
		return 0, 0, true, nil
	}
	if len(args) == 3 && args[1] == "per" {
		args = []string{args[0], args[2]}
	}
	if len(args) != 2 {
		form := "<requests> [per] <duration>"
		if offOK {
			form += " or off"
		}
		return 0, 0, false, fmt.Errorf("want %s, got %d arguments", form, len(args))
	}
	for _, a := range args {
		if confvalue.HasPlaceholder(a) {
			return 0, 0, false, fmt.Errorf("%q: a runtime placeholder cannot give a number here; use {$VAR}, replaced when the Caddyfile is adapted", a)
		}
	}
	requests, err = strconv.Atoi(args[0])
	if err != nil || requests <= 0 {
		return 0, 0, false, fmt.Errorf("%q is not a positive number of requests", args[0])
	}
	window, err = caddy.ParseDuration(args[1])
	if err != nil {
		return 0, 0, false, fmt.Errorf("%q is not a duration (e.g. 1m, 1h): %v", args[1], err)
	}
	if window <= 0 {
		return 0, 0, false, fmt.Errorf("window %q must be positive", args[1])
	}
	return requests, window, false, nil
}
