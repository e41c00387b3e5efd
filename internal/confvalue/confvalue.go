// Package confvalue reads the values of the modules' configurations the
// same way everywhere: placeholders resolved at load time, where an unknown
// or empty placeholder is an error naming it, byte sizes, and Caddyfile
// subdirectives that take no block; and the modules' JSON config, whose
// errors name the path of the value and what to write there.
package confvalue

import (
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
	"go.uber.org/zap"
)

// MaxSize is the largest size Size accepts.
const MaxSize = 1 << 40

// HasPlaceholder reports whether s holds a placeholder, which only load
// time (or request time) can resolve; parsers check such values later.
func HasPlaceholder(s string) bool {
	return strings.Contains(s, "{")
}

// Replace replaces the global placeholders of s ({env.X}, {system.*}),
// refusing unknown ones and ones that evaluate to empty, so that an unset
// environment variable is a load-time error rather than an empty secret.
// Caddy's message quotes the placeholder ("evaluated placeholder
// {env.X} is empty"); it is kept only when s is one whole placeholder,
// since otherwise the braces may be part of a literal secret (escape them
// as \{ \}).
func Replace(repl *caddy.Replacer, s string) (string, error) {
	if i := openBrace(s); i >= 0 {
		// Caddy leaves such a brace as it is: {env.TOKEN without its
		// end would be taken for the secret itself.
		return "", fmt.Errorf("the %q at byte %d starts no placeholder: no \"}\" closes it (escape a literal brace as \\{)", "{", i)
	}
	out, err := repl.ReplaceOrErr(s, true, true)
	if err != nil {
		if isWholePlaceholder(s) {
			return "", err
		}
		return "", fmt.Errorf("holds an unknown or empty placeholder (escape a literal brace as \\{)")
	}
	return out, nil
}

// Required is Replace that also refuses a missing value and an empty
// (or all-space) result.
func Required(repl *caddy.Replacer, s string) (string, error) {
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("value is missing")
	}
	out, err := Replace(repl, s)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(out) == "" {
		return "", fmt.Errorf("value is empty after placeholder replacement")
	}
	return out, nil
}

// openBrace returns the index of the first unescaped "{" of s that no
// unescaped "}" closes before the next "{", or -1.
func openBrace(s string) int {
	open := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++ // an escaped brace is text
		case '{':
			if open >= 0 {
				return open
			}
			open = i
		case '}':
			open = -1
		}
	}
	return open
}

// isWholePlaceholder reports whether s is exactly one placeholder, such as
// {env.SIGNING_KEY}.
func isWholePlaceholder(s string) bool {
	return len(s) > 2 && s[0] == '{' && s[len(s)-1] == '}' && !strings.ContainsAny(s[1:len(s)-1], "{}")
}

// Size reads a positive byte size such as "4MiB", "512KB" or "1048576"
// (at most MaxSize).
func Size(s string) (int64, error) {
	size, err := humanize.ParseBytes(s)
	if err != nil {
		// humanize's own message ("strconv.ParseFloat: parsing ...") names
		// neither the value nor the fix.
		return 0, fmt.Errorf("%q is not a size: write a number of bytes with an optional unit, e.g. 10MiB, 1.5MB or 1048576", s)
	}
	if size == 0 || size > MaxSize {
		return 0, fmt.Errorf("%q: size must be between 1 byte and 1 TiB", s)
	}
	return int64(size), nil
}

// WarnIfLiteralSecret logs once, at load, that the secret of field was
// written into the config itself. The config JSON is visible through the
// admin API (/config/), autosave.json and Caddy's own DEBUG dumps; an
// {env.X} or {file.X} placeholder keeps the value out of all of them.
func WarnIfLiteralSecret(logger *zap.Logger, field, raw string) {
	if raw == "" || HasPlaceholder(raw) {
		return
	}
	logger.Warn("secret configured as a literal",
		zap.String("field", field), zap.String("use", "an {env.*} placeholder"),
		zap.String("why", "the config is shown by the admin API, autosave and debug logs"))
}

// NoBlock refuses a block after the arguments of a subdirective that
// takes none (what names it): the block loop would read its "{" as a
// subdirective. An empty block ("{}", or "{" and "}" on the next line)
// is refused too.
func NoBlock(d *caddyfile.Dispenser, what string) error {
	last := d.Val()
	if d.NextBlock(d.Nesting()) || d.Val() != last {
		// Back over the "{" to the line's last token, so that the error
		// names the subdirective's line.
		d.Prev()
		d.Prev()
		return d.Errf("%s takes no block", what)
	}
	return nil
}

// OneValue reads the one value of the subdirective the dispenser is on
// (what names it in errors). {$VAR} is replaced when the file is read;
// unset, it leaves no token at all, so a missing value says so.
func OneValue(d *caddyfile.Dispenser, what string) (string, error) {
	args := d.RemainingArgs()
	switch len(args) {
	case 0:
		return "", NoValue(d, what)
	case 1:
		return args[0], nil
	}
	return "", d.Errf("%s: one value, got extra %q", what, args[1])
}

// NoValue is the error of a subdirective (what) given without its value.
func NoValue(d *caddyfile.Dispenser, what string) error {
	return d.Errf("%s: no value (is a {$VAR} in it unset or empty?)", what)
}

// Flag refuses a value after a subdirective (what) that takes none.
func Flag(d *caddyfile.Dispenser, what string) error {
	if d.NextArg() {
		return d.Errf("%s takes no value, got %q", what, d.Val())
	}
	return nil
}
