package fsp

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRequestPath(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // String() of the result, or the error's text
	}{
		{"/", "/"},
		{"", "/"},
		{"/photos/", "/photos/"},
		{"/photos/cat.png", "/photos/cat.png"},
		{"/new%20dir%20(2)/a_b-c.d", "/new dir (2)/a_b-c.d"},
		{"/photos//cat.png", errBadPath.Error()},
		{"/photos/%2F", errBadPath.Error()},
		{"/a%2Fb.png", errBadPath.Error()},
		{"/a%5Cb.png", errBadPath.Error()},
		{`/a\b.png`, errBadPath.Error()},
		{"/a|b.png", "/a|b.png"},
		{"/caf%C3%A9.png", "/café.png"},
		{"/%E5%9B%BE%E7%89%87.png", "/图片.png"},
		{"/a+b&c%25,d'e#f~g?h.png", "/a+b&c%,d'e#f~g?h.png"},
		{"/a%23b%3Fc.png", "/a#b?c.png"},
		{"/%F0%9F%98%80.png", "/😀.png"},
		{"/cafe%CC%81.png", "/cafe\u0301.png"},
		{"/.hidden/", "/.hidden/"},
		{"/trailing%20/", "/trailing /"},
		{"/...%20/", "/... /"},
		{"/.thumb.x.png", errBadPath.Error()},
		{"/x/.tmp-1", errBadPath.Error()},
		{"/a%00b.png", errBadPath.Error()},
		{"/a%0Ab.png", errBadPath.Error()},
		{"/a%7Fb.png", errBadPath.Error()},
		{"/a%C2%85b.png", errBadPath.Error()},
		{"/a%FFb.png", errBadPath.Error()},
		{"/bad%zz.png", errBadPath.Error()},
		{"/a/../b", errOutside.Error()},
		{"/a/%2e%2E/b", errOutside.Error()},
		{"/./b", errOutside.Error()},
		{"photos/", errBadPath.Error()},
		{"/" + strings.Repeat("a/", maxPathSegments+1), errBadPath.Error()},
		{"/" + strings.Repeat("n", maxNameLen+1), errBadPath.Error()},
	} {
		p, err := parseRequestPath(c.in)
		got := p.String()
		if errors.Is(err, errBadPath) {
			got = errBadPath.Error()
		} else if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("parseRequestPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseDirPath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/", "/"},
		{"/archive/", "/archive/"},
		{"/a b/c/", "/a b/c/"},
		{"/archive", errBadPath.Error()},
		{"archive/", errBadPath.Error()},
		{"", errBadPath.Error()},
		{"/a//b/", errBadPath.Error()},
		{"/../u2/", errOutside.Error()},
		{"/a/./", errOutside.Error()},
		{"/a%2Fb/", "/a%2Fb/"},
		{"/a|b/", "/a|b/"},
		{"/a\\b/", errBadPath.Error()},
		{"/a\x00/", errBadPath.Error()},
		{"/.thumb.x/", errBadPath.Error()},
		{"/图片/é/", "/图片/é/"},
	} {
		p, err := parseDirPath(c.in)
		got := p.String()
		if errors.Is(err, errBadPath) {
			got = errBadPath.Error()
		} else if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("parseDirPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCheckOriginalPath(t *testing.T) {
	for _, c := range []struct {
		in   string
		want error
	}{
		{"/fsp/photos/cat.png", nil},
		{"/fsp/photos/../cat.png", errOutside},
		{"/fsp/photos/%2e%2e/cat.png", errOutside},
		{"/fsp/photos/..%2Fcat.png", errBadPath},
		{"/fsp/photos/..%2fcat.png", errBadPath},
		{"/fsp/a%5cb", errBadPath},
		{"/fsp/a%zz", errBadPath},
	} {
		if got := checkOriginalPath(c.in); !errors.Is(got, c.want) && got != c.want {
			t.Errorf("checkOriginalPath(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestRootSegment(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"u1", "u1"},
		{"user@example.com", "user@example.com"},
		{"a/b", "a~2Fb"},
		{"..", "~2E."},
		{".hidden", "~2Ehidden"},
		{"~", "~7E"},
		{"", ""},
		{"é", "~C3~A9"},
	} {
		if got := rootSegment(c.in); got != c.want {
			t.Errorf("rootSegment(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestKeepName(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"pizza.jpg", 0, "pizza.jpg"},
		{"pizza.jpg", 1, "pizza_1.jpg"},
		{"pizza.jpg", 2, "pizza_2.jpg"},
		{"archive.tar.gz", 1, "archive.tar_1.gz"},
		{"README", 3, "README_3"},
		{".hidden", 1, ".hidden_1"},
		// A name that is only a stored type's extension keeps it: the
		// free name is stored and listed as the same type.
		{".png", 1, "_1.png"},
		{".PDF", 2, "_2.PDF"},
	} {
		if got := keepName(c.in, c.n); got != c.want {
			t.Errorf("keepName(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	// Every name an upload may have gives free names of its type.
	for ext := range fileTypes {
		for _, name := range []string{"a" + ext, ext, ".a" + ext, "a.b" + ext} {
			free := keepName(name, 7)
			if err := checkName(free, storableTypes()); err != nil || typeForName(free) != typeForName(name) {
				t.Errorf("keepName(%q) = %q: %v, type %s, want %s", name, free, err, typeForName(free), typeForName(name))
			}
		}
	}
}

// FuzzPaths: whatever the request target, a parsed path has only valid
// names (no separator, no dot segment, no reserved name), its String form
// parses back to itself, and its storage key stays inside the user's root.
func FuzzPaths(f *testing.F) {
	for _, seed := range []string{"/", "/a/", "/a/b.png", "/a%2Fb", "/..", "/a/%2e%2e/", "/new%20dir/", "//", "/a\\b", "/%00", "/.x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := parseRequestPath(in)
		origErr := checkOriginalPath(in)
		if err != nil {
			return
		}
		for _, s := range p.segs {
			if checkSegment(s) != nil || strings.ContainsAny(s, "/\\\x00") || s == "." || s == ".." || reservedName(s) {
				t.Fatalf("%q gave segment %q", in, s)
			}
		}
		if origErr != nil {
			t.Fatalf("%q parsed to %q, but checkOriginalPath refuses it: %v", in, p, origErr)
		}
		again, err := parseDirPath(p.parent().String())
		if err != nil || again.String() != p.parent().String() {
			t.Fatalf("%q: parent %q does not parse back: %v", in, p.parent(), err)
		}
		key := joinKey("c1/u1", p.rel())
		if !strings.HasPrefix(key+"/", "c1/u1/") {
			t.Fatalf("%q: key %q leaves the root", in, key)
		}
	})
}

// TestSharedOverlap: a shared folder that lies inside every user's
// folder, or holds them, is known at load; where it depends on the
// placeholders' values, the request's root is checked.
func TestSharedOverlap(t *testing.T) {
	const uid = "{http.request.header.X-BEE-Uid}"
	for _, c := range []struct {
		template, key string
		always        bool
	}{
		{defaultRoot, "shared/logos", false},
		{defaultRoot, "logos", false},
		{"users/" + uid, "users", true},
		{"users/" + uid, "users/x/y", false},
		{"users/" + uid, "other", false},
		{"team", "team/logos", true},
		{"team", "team", true},
		{"team", "teams", false},
		{"a/b/" + uid, "a/b", true},
		{"u-" + uid, "u-logos", false},
	} {
		if got := sharedOverlapsEveryRoot(c.template, c.key); got != c.always {
			t.Errorf("root %q, shared %q: always %v, want %v", c.template, c.key, got, c.always)
		}
	}
	h := &Handler{Shared: []SharedFolder{{Name: "logos", Key: "/shared/logos/"}, {Name: "team", Key: "c2"}}}
	for _, c := range []struct {
		root string
		want string // the shared folder's name, "" for none
	}{
		{"shared/logos", "logos"},
		{"shared", "logos"},
		{"shared/logos/x", "logos"},
		{"shared/logos2", ""},
		{"shared/log", ""},
		{"c2/bob", "team"},
		{"c2", "team"},
		{"c20/bob", ""},
		{"c1/u1", ""},
	} {
		got := ""
		if s := h.sharedOverlap(c.root); s != nil {
			got = s.Name
		}
		if got != c.want {
			t.Errorf("root %q overlaps %q, want %q", c.root, got, c.want)
		}
	}
}
