package fsp

import (
	"errors"
	"net/url"
	"strings"
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
	// errBadPath: a segment that is empty, holds a character outside the
	// allowed set, or an encoded separator (3500).
	errBadPath = errors.New("bad path")
	// errOutside: a "." or ".." segment, which would leave the place it
	// names (3300: outside the user's tree).
	errOutside = errors.New("path leaves the user's tree")
)

// maxPathSegments and maxNameLen bound what one request may name.
const (
	maxPathSegments = 32
	maxNameLen      = 255
)

// validName reports whether name may be a file or directory name: the
// contract's set [ a-zA-Z0-9._()-]+, not "." or "..", and not starting with
// "." (names starting with a dot are the provider's own: thumbnails and
// temporary files), not ending in a space.
func validName(name string) bool {
	if name == "" || len(name) > maxNameLen || name[0] == '.' || name[len(name)-1] == ' ' {
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
	return true
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
		if name == "." || name == ".." {
			return fspPath{}, errOutside
		}
		if !validName(name) {
			return fspPath{}, errBadPath
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
		if name == "." || name == ".." {
			return fspPath{}, errOutside
		}
		if !validName(name) {
			return fspPath{}, errBadPath
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
func rootSegment(value string) string {
	var b strings.Builder
	for i := 0; i < len(value); i++ {
		c := value[i]
		safe := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
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
