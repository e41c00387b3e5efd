package fsp

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
)

// fspPath is a path of the FSP API, relative to the user's tree: its
// segments (every one a valid name) and whether it names a directory. The
// root directory has no segments.
type fspPath struct {
	segs []string
	dir  bool
}

// Errors of path parsing; the handler turns them into FSP codes.
var (
	// errBadPath: a path that is not one of the API's forms (relative,
	// an empty segment, too many segments, a bad percent-encoding) (3500).
	errBadPath = errors.New("bad path")
	// errOutside: a "." or ".." segment, which would leave the place it
	// names (3300: outside the user's tree).
	errOutside = errors.New("path leaves the user's tree")
)

// nameError is a name that cannot be stored (3500); details tell the user
// why. It wraps errBadPath.
type nameError struct{ details string }

func (e *nameError) Error() string { return "bad name: " + e.details }
func (e *nameError) Unwrap() error { return errBadPath }

// maxPathSegments and maxNameLen bound what one request may name;
// maxNameLen is the name length both back ends hold (a local file
// system's NAME_MAX; versitygw stores an S3 key's segments as file names).
// maxKeyLen is S3's limit of a whole key, kept on both back ends so that
// they answer the same.
const (
	maxPathSegments = 32
	maxNameLen      = 255
	maxKeyLen       = 1024
)

// Prefixes of the provider's own files, kept beside the users' files and
// never listed: thumbnails and temporary files of writes in progress.
const (
	thumbPrefix = ".thumb."
	tempPrefix  = ".tmp-"
)

// reservedName reports whether name is one of the provider's own files,
// in any letter case: on a folder that ignores case (macOS, Windows,
// casefold ext4) ".THUMB.a.png.png" is a.png's thumbnail.
func reservedName(name string) bool {
	return hasPrefixFold(name, thumbPrefix) || hasPrefixFold(name, tempPrefix)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// checkSegment returns why name cannot be a file or folder name, nil when it
// can. A name is kept exactly as given (no Unicode normalisation, see
// docs/fsp.md), in any script and with any punctuation; refused are only
// what no storage holds safely or what would change the path's meaning:
// the empty name, "." and "..", "/" and "\", NUL and the other control
// characters, bytes that are not UTF-8 (JSON could not answer the same
// name back), names over maxNameLen bytes and the provider's own prefixes.
func checkSegment(name string) error {
	switch {
	case name == "":
		return &nameError{"A name may not be empty"}
	case name == "." || name == "..":
		return errOutside
	case len(name) > maxNameLen:
		return &nameError{fmt.Sprintf("The name is %d bytes long; at most %d bytes (UTF-8) fit", len(name), maxNameLen)}
	case !utf8.ValidString(name):
		return &nameError{"The name is not valid UTF-8 text"}
	case reservedName(name):
		return &nameError{fmt.Sprintf("Names starting with %s or %s are kept for the file service's own files", thumbPrefix, tempPrefix)}
	}
	for _, r := range name {
		switch {
		case r == '/' || r == '\\':
			return &nameError{fmt.Sprintf("A name may not contain %c", r)}
		case unicode.IsControl(r):
			return &nameError{fmt.Sprintf("A name may not contain control characters (here U+%04X)", r)}
		}
	}
	return nil
}

// vendorFolderName reports whether name matches the folder name pattern of
// the vendor's documentation, [ a-zA-Z0-9._()-]+: shared folders, which
// the configuration names, keep to it.
func vendorFolderName(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == ' ', c == '.', c == '_', c == '(', c == ')', c == '-':
		default:
			return false
		}
	}
	return !reservedName(name)
}

// parseRequestPath parses the escaped request path (as on the wire, after
// the site's prefix was stripped). Each segment is unescaped on its own, so
// an encoded separator (%2F, %5C) stays inside a segment and is refused
// rather than becoming a separator.
func parseRequestPath(escaped string) (fspPath, error) {
	if escaped == "" {
		escaped = "/"
	}
	if escaped[0] != '/' {
		return fspPath{}, errBadPath
	}
	p := fspPath{dir: strings.HasSuffix(escaped, "/")}
	trimmed := strings.TrimSuffix(escaped[1:], "/")
	if trimmed == "" {
		if !p.dir {
			return fspPath{}, errBadPath
		}
		return p, nil
	}
	raw := strings.Split(trimmed, "/")
	if len(raw) > maxPathSegments {
		return fspPath{}, errBadPath
	}
	for _, seg := range raw {
		name, err := url.PathUnescape(seg)
		if err != nil {
			return fspPath{}, errBadPath
		}
		if err := checkSegment(name); err != nil {
			return fspPath{}, err
		}
		p.segs = append(p.segs, name)
	}
	return p, nil
}

// parseDirPath parses new_path of a move: an absolute, unescaped directory
// path such as "/other/dir/".
func parseDirPath(text string) (fspPath, error) {
	if text == "" || text[0] != '/' || !strings.HasSuffix(text, "/") {
		return fspPath{}, errBadPath
	}
	p := fspPath{dir: true}
	trimmed := strings.Trim(text, "/")
	if trimmed == "" {
		return p, nil
	}
	raw := strings.Split(trimmed, "/")
	if len(raw) > maxPathSegments {
		return fspPath{}, errBadPath
	}
	for _, name := range raw {
		if err := checkSegment(name); err != nil {
			return fspPath{}, err
		}
	}
	p.segs = raw
	return p, nil
}

// name is the last segment ("" for the root).
func (p fspPath) name() string {
	if len(p.segs) == 0 {
		return ""
	}
	return p.segs[len(p.segs)-1]
}

// parent is the directory holding p (the root for the root).
func (p fspPath) parent() fspPath {
	if len(p.segs) == 0 {
		return fspPath{dir: true}
	}
	return fspPath{segs: p.segs[:len(p.segs)-1], dir: true}
}

// child is the entry name inside directory p.
func (p fspPath) child(name string, dir bool) fspPath {
	segs := make([]string, len(p.segs), len(p.segs)+1)
	copy(segs, p.segs)
	return fspPath{segs: append(segs, name), dir: dir}
}

// String is the API form: "/a/b/" for a directory, "/a/b.png" for a file.
func (p fspPath) String() string {
	s := "/" + strings.Join(p.segs, "/")
	if p.dir && len(p.segs) > 0 {
		s += "/"
	}
	return s
}

// rel is the slash-separated form without leading or trailing slash.
func (p fspPath) rel() string { return strings.Join(p.segs, "/") }

// joinKey joins storage key parts, skipping empty ones.
func joinKey(parts ...string) string {
	var out []string
	for _, part := range parts {
		if part != "" {
			out = append(out, part)
		}
	}
	return strings.Join(out, "/")
}

// rootSegment turns one placeholder value of the storage-root template into
// a safe path segment: letters, digits and "-_@+" stay; every other byte,
// and a leading dot, becomes "~XX". So a uid such as "a/../b" stays one
// segment and two different values never share a folder.
//
// With foldCase (a local folder that ignores letter case, see
// caseInsensitive) upper-case letters are escaped too ("Bob" is "~42ob"):
// there "Bob" and "bob" would name one folder. The segment then holds
// upper-case letters only as the hex digits after a "~", so two segments
// that differ only in case are never made. Every byte outside ASCII is
// escaped either way, so no segment has a non-ASCII letter whose case or
// Unicode normalisation (NFC or NFD, which APFS and HFS+ do not tell
// apart) a file system could fold.
func rootSegment(value string, foldCase bool) string {
	var b strings.Builder
	for i := 0; i < len(value); i++ {
		c := value[i]
		safe := c >= 'a' && c <= 'z' || (c >= 'A' && c <= 'Z' && !foldCase) || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '@' || c == '+' || (c == '.' && i > 0)
		if safe {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('~')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// rootMark stands for a placeholder's value in a root template marked by
// markRoot.
const rootMark = "\x01"

// markRoot is the root template with every placeholder replaced by
// rootMark.
func markRoot(template string) (string, error) {
	return caddy.NewEmptyReplacer().ReplaceFunc(template, func(string, any) (any, error) { return rootMark, nil })
}

// keysOverlap reports whether storage keys a and b name one folder or one
// lies inside the other; with foldCase (a folder that ignores letter
// case) segments that differ only in case are the same.
func keysOverlap(a, b string, foldCase bool) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] != bs[i] && !(foldCase && strings.EqualFold(as[i], bs[i])) {
			return false
		}
	}
	return true
}

// sharedOverlapsEveryRoot reports whether the shared folder at key and
// every user's folder of the root template lie one inside the other,
// whatever values the placeholders get: the literal segments they share
// are equal (in any letter case with foldCase), and no placeholder comes
// before the shorter one ends. Where it depends on the values, each
// request is checked (sharedOverlap).
func sharedOverlapsEveryRoot(template, key string, foldCase bool) bool {
	rendered, err := markRoot(template)
	if err != nil {
		return false
	}
	rootSegs := strings.Split(strings.Trim(rendered, "/"), "/")
	keySegs := strings.Split(key, "/")
	for i := 0; i < len(rootSegs) && i < len(keySegs); i++ {
		if strings.Contains(rootSegs[i], rootMark) ||
			rootSegs[i] != keySegs[i] && !(foldCase && strings.EqualFold(rootSegs[i], keySegs[i])) {
			return false
		}
	}
	return true
}

// sharedOverlap is the shared folder that the user's folder at root is,
// lies inside or holds, nil for none. Such a user would write into a
// folder the others may only read, or every user would read theirs.
func (h *Handler) sharedOverlap(root string) *SharedFolder {
	for i := range h.Shared {
		if keysOverlap(root, strings.Trim(h.Shared[i].Key, "/"), h.foldCase) {
			return &h.Shared[i]
		}
	}
	return nil
}

// cleanRootTemplate checks the literal parts of a rendered storage root:
// relative, no empty, "." or ".." segments. It returns the key form.
func cleanRoot(rendered string) (string, error) {
	rendered = strings.Trim(rendered, "/")
	if rendered == "" {
		return "", nil
	}
	for _, seg := range strings.Split(rendered, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00") {
			return "", errBadPath
		}
	}
	return rendered, nil
}

// checkOriginalPath looks at the request target as the client sent it,
// before Caddy's rewrites (handle_path, uri) clean it: there "/a/../b" is
// already "/b" and "a%2F..%2Fb" may be too. A dot segment (plain or
// encoded) anywhere is errOutside; an encoded separator or a backslash is
// errBadPath.
func checkOriginalPath(escaped string) error {
	for _, seg := range strings.Split(escaped, "/") {
		lower := strings.ToLower(seg)
		if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") || strings.Contains(seg, `\`) {
			return errBadPath
		}
		name, err := url.PathUnescape(seg)
		if err != nil {
			return errBadPath
		}
		if name == "." || name == ".." {
			return errOutside
		}
	}
	return nil
}
