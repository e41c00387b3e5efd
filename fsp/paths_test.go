package fsp

import (
	"errors"
	"strings"
	"testing"
)

// parseCase is a path parser's input and what it must give: the path's
// String(), or the error's text.
type parseCase struct{ in, want string }

// checkParse runs parse, named name, on each case's input.
func checkParse(t *testing.T, name string, parse func(string) (fspPath, error), cases []parseCase) {
	t.Helper()
	for _, c := range cases {
		p, err := parse(c.in)
		got := p.String()
		if errors.Is(err, errBadPath) {
			got = errBadPath.Error()
		} else if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s(%q) = %q, want %q", name, c.in, got, c.want)
		}
	}
}

func TestParseRequestPath(t *testing.T) {
	checkParse(t, "parseRequestPath", parseRequestPath, []parseCase{
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
	})
}

func TestParseDirPath(t *testing.T) {
	checkParse(t, "parseDirPath", parseDirPath, []parseCase{
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
	})
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

// TestRootSegment: on a case-sensitive folder a value's letters stay as
// they are (the folders of existing deployments keep their names); on one
// that ignores case, upper-case letters are escaped too, and no two values
// give segments that differ only in case.
func TestRootSegment(t *testing.T) {
	for _, c := range []struct{ in, want, folded string }{
		{"u1", "u1", "u1"},
		{"user@example.com", "user@example.com", "user@example.com"},
		{"Bob", "Bob", "~42ob"},
		{"bob", "bob", "bob"},
		{"BOB", "BOB", "~42~4F~42"},
		{"Z-a_@+.A", "Z-a_@+.A", "~5A-a_@+.~41"},
		{"a/b", "a~2Fb", "a~2Fb"},
		{"..", "~2E.", "~2E."},
		{".hidden", "~2Ehidden", "~2Ehidden"},
		{"~", "~7E", "~7E"},
		{"~42ob", "~7E42ob", "~7E42ob"},
		{"", "", ""},
		// Every byte outside ASCII is escaped: NFC and NFD of é stay
		// apart, and so do É and é.
		{"é", "~C3~A9", "~C3~A9"},
		{"e\u0301", "e~CC~81", "e~CC~81"},
		{"É", "~C3~89", "~C3~89"},
		{"K", "K", "~4B"},
		{"\u212A", "~E2~84~AA", "~E2~84~AA"}, // the Kelvin sign, which folds to k
	} {
		if got := rootSegment(c.in, false); got != c.want {
			t.Errorf("rootSegment(%q, false) = %q, want %q", c.in, got, c.want)
		}
		if got := rootSegment(c.in, true); got != c.folded {
			t.Errorf("rootSegment(%q, true) = %q, want %q", c.in, got, c.folded)
		}
	}
	values := []string{"Bob", "bob", "BOB", "bOb", "~42ob", "~42OB", "~7E42ob", "K", "k", "\u212A",
		"é", "É", "e\u0301", "E\u0301", "ß", "SS", "ss", "a.B", "a.b", "A.b", "İ", "i", "I", "ı"}
	for i := 0; i < 256; i++ {
		values = append(values, string(rune(i)), "x"+string(rune(i)))
	}
	seen := map[string]string{}
	for _, v := range values {
		seg := rootSegment(v, true)
		folded := strings.ToLower(seg)
		if other, dup := seen[folded]; dup && other != v {
			t.Errorf("rootSegment(%q, true) = %q and rootSegment(%q, true) = %q differ only in case", v, seg, other, rootSegment(other, true))
		}
		seen[folded] = v
		for _, r := range seg {
			if r >= 'A' && r <= 'Z' && !strings.ContainsRune("ABCDEF", r) || r > 0x7F {
				t.Errorf("rootSegment(%q, true) = %q holds %q", v, seg, r)
			}
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
		if got := sharedOverlapsEveryRoot(c.template, c.key, false); got != c.always {
			t.Errorf("root %q, shared %q: always %v, want %v", c.template, c.key, got, c.always)
		}
	}
	// On a folder that ignores case, "Users" and "users" are one folder.
	for _, c := range []struct {
		template, key        string
		always, alwaysFolded bool
	}{
		{"Users/" + uid, "users", false, true},
		{"users/" + uid, "USERS", false, true},
		{"Team", "team/logos", false, true},
		{"team", "Teams", false, false},
		{"users/" + uid, "Other", false, false},
	} {
		if got := sharedOverlapsEveryRoot(c.template, c.key, false); got != c.always {
			t.Errorf("root %q, shared %q, case-sensitive: always %v, want %v", c.template, c.key, got, c.always)
		}
		if got := sharedOverlapsEveryRoot(c.template, c.key, true); got != c.alwaysFolded {
			t.Errorf("root %q, shared %q, case-insensitive: always %v, want %v", c.template, c.key, got, c.alwaysFolded)
		}
	}
	h := &Handler{Shared: []SharedFolder{{Name: "logos", Key: "/shared/logos/"}, {Name: "team", Key: "c2"}, {Name: "pics", Key: "Pics"}}}
	for _, c := range []struct {
		root   string
		want   string // the shared folder's name, "" for none
		folded string // the same on a folder that ignores case
	}{
		{"shared/logos", "logos", "logos"},
		{"shared", "logos", "logos"},
		{"shared/logos/x", "logos", "logos"},
		{"shared/logos2", "", ""},
		{"shared/log", "", ""},
		{"c2/bob", "team", "team"},
		{"c2", "team", "team"},
		{"c20/bob", "", ""},
		{"c1/u1", "", ""},
		{"Shared/Logos", "", "logos"},
		{"C2/bob", "", "team"},
		{"pics/bob", "", "pics"},
		{"Pics/bob", "pics", "pics"},
		{"pic/bob", "", ""},
	} {
		for _, fold := range []bool{false, true} {
			h.foldCase = fold
			want := c.want
			if fold {
				want = c.folded
			}
			got := ""
			if s := h.sharedOverlap(c.root); s != nil {
				got = s.Name
			}
			if got != want {
				t.Errorf("root %q (case-insensitive %v) overlaps %q, want %q", c.root, fold, got, want)
			}
		}
	}
}
