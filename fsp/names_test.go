package fsp

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// nameSeeds are names people give files: several scripts, punctuation,
// and the names that must be refused.
var nameSeeds = []string{
	"cat.png", "café.png", "图片.png", "résumé.pdf", "a+b.png", "a&b.png", "100%.png",
	"O'Brien.png", "photo#1.png", "a,b.png", "~tilde.png", "😀.png", "what?.png",
	"файл.png", "ملف.png", "ファイル.png", "파일.png", "קובץ.png", "cafe\u0301.png",
	".hidden", "trailing ", "... ", "a;b=c@d$e!.png", "%2F.png", "a b  c.png",
	"", ".", "..", "a/b.png", `a\b.png`, "a\x00b", "a\nb", "a\u0085b", ".thumb.x.png", ".tmp-1",
	strings.Repeat("é", 128),
}

// FuzzNames: any valid UTF-8 name either round-trips exactly (sent
// percent-encoded as a path segment, stored, listed, and in its public
// URL) or is refused with one of the documented errors.
func FuzzNames(f *testing.F) {
	for _, s := range nameSeeds {
		f.Add(s)
	}
	store, err := newLocalStorage(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { store.Close() })
	q := &request{public: "https://cdn.example/files"}
	f.Fuzz(func(t *testing.T, name string) {
		if !utf8.ValidString(name) {
			t.Skip()
		}
		if name == "" {
			if checkSegment(name) == nil {
				t.Fatal("the empty name is accepted")
			}
			return // "/" is the root folder, not a name
		}
		p, err := parseRequestPath("/" + url.PathEscape(name))
		check := checkSegment(name)
		if (err == nil) != (check == nil) {
			t.Fatalf("%q: parse %v, checkSegment %v", name, err, check)
		}
		if err != nil {
			var ne *nameError
			if !errors.As(err, &ne) && !errors.Is(err, errOutside) {
				t.Fatalf("%q: undocumented error %v", name, err)
			}
			if errors.As(err, &ne) && ne.details == "" {
				t.Fatalf("%q: refused without details", name)
			}
			return
		}
		if p.name() != name || len(p.segs) != 1 {
			t.Fatalf("%q parsed to %q", name, p.segs)
		}
		// The same name as a folder, and in a move's new_path.
		if d, err := parseRequestPath("/" + url.PathEscape(name) + "/"); err != nil || d.name() != name {
			t.Fatalf("%q as a folder: %q, %v", name, d.segs, err)
		}
		if d, err := parseDirPath("/" + name + "/"); err != nil || d.name() != name {
			t.Fatalf("%q in new_path: %q, %v", name, d.segs, err)
		}
		// Its public URL names it, each segment percent-encoded.
		pub := q.publicURL(joinKey("c1/u1", name))
		seg := strings.TrimPrefix(pub, "https://cdn.example/files/c1/u1/")
		if strings.ContainsAny(seg, "/?# ") {
			t.Fatalf("%q: public URL segment %q is not encoded", name, seg)
		}
		if back, err := url.PathUnescape(seg); err != nil || back != name {
			t.Fatalf("%q: public URL %q gives back %q", name, pub, back)
		}
		if _, err := url.Parse(pub); err != nil {
			t.Fatalf("%q: public URL %q does not parse: %v", name, pub, err)
		}
		// Stored exactly, listed exactly.
		ctx := context.Background()
		if _, err := store.Write(ctx, name, []byte("x"), "text/plain", false); err != nil {
			t.Fatalf("%q: storing: %v", name, err)
		}
		defer func() {
			if err := store.Remove(ctx, name); err != nil {
				t.Fatalf("%q: removing: %v", name, err)
			}
		}()
		entries, err := store.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range entries {
			found = found || (e.Name == name && listable(e.Name))
		}
		if !found {
			t.Fatalf("%q: stored but not listed", name)
		}
	})
}

func TestCheckSegmentDetails(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"a\\b.png", `may not contain \`},
		{"a\x01b", "control characters (here U+0001)"},
		{strings.Repeat("n", maxNameLen+1), "256 bytes long; at most 255"},
		{".thumb.a.png", "kept for the file service's own files"},
		// In any case: on a folder that ignores case (macOS, Windows,
		// casefold ext4) this would be another file's thumbnail.
		{".THUMB.a.png.png", "kept for the file service's own files"},
		{".Tmp-1", "kept for the file service's own files"},
		{"", "may not be empty"},
	} {
		var ne *nameError
		if err := checkSegment(c.name); !errors.As(err, &ne) || !strings.Contains(ne.details, c.want) {
			t.Errorf("checkSegment(%q) = %v, want details with %q", c.name, err, c.want)
		}
	}
}
