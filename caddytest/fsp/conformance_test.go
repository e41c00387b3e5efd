package fsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// The conformance test is written from the vendor's description of a file
// system provider (its "Connect your file storage system" page and its
// error table), not from this code: every operation, every field of a
// resource's metadata and every error code a request can cause, with
// names in several scripts. Both back ends run the same exchanges, and
// their answers must be the same once times and URL bases are masked.

// scriptNames are file names people give, in several scripts and with the
// punctuation file systems accept.
var scriptNames = []string{
	"my pic1.png", "café.png", "résumé.png", "图片.png", "файл.png", "ملف.png", "ファイル.png",
	"파일.png", "קובץ.png", "😀 smile.png", "a+b.png", "a&b.png", "100%.png", "O'Brien.png",
	"photo#1.png", "a,b.png", "~tilde.png", "what?.png", "semi;colon=@$!.png", "cafe\u0301.png",
}

// Minimal contents that sniff as the file manager's audio and video types.
var mediaSamples = map[string]string{
	"clip.mp4":  "\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + strings.Repeat("\x00", 64),
	"song.mp3":  "ID3\x03\x00\x00\x00\x00\x00\x0f" + strings.Repeat("\x00", 64),
	"sound.wav": "RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00" + strings.Repeat("\x00", 64),
	"clip.webm": "\x1a\x45\xdf\xa3" + strings.Repeat("\x00", 64),
	"sound.ogg": "OggS\x00\x02" + strings.Repeat("\x00", 64),
	"clip.avi":  "RIFF\x24\x00\x00\x00AVI LIST" + strings.Repeat("\x00", 64),
}

// confStep is one request of the conformance table and what the vendor's
// documentation says of its answer: wantCode 0 is success.
type confStep struct {
	name string
	call
	wantCode int
	// wantDetails is text the error's details must hold.
	wantDetails string
	check       func(t *testing.T, c *conformance, d dataJSON)
}

// conformance is one back end's run.
type conformance struct {
	b   backend
	src *sources
	// transcript is every answer, masked, in order.
	transcript []string
}

var lastModifiedRe = regexp.MustCompile(`"last-modified":\d+`)

// mask removes what differs between back ends by nature: times and the
// public URL base.
func (c *conformance) mask(body []byte) string {
	base := live(c.b.publicBase) // the running config's port
	s := strings.ReplaceAll(string(body), base+"/", "<public>/")
	s = strings.ReplaceAll(s, strings.ReplaceAll(base, "/", `\/`)+`\/`, "<public>/")
	return lastModifiedRe.ReplaceAllString(s, `"last-modified":"<time>"`)
}

// checkMetaFields checks one resource's metadata against the documented
// fields and their types.
func checkMetaFields(t *testing.T, what string, raw json.RawMessage) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Errorf("%s: meta %s: %v", what, raw, err)
		return
	}
	for _, f := range []string{"mime-type", "name", "path", "permissions"} {
		if _, ok := m[f].(string); !ok {
			t.Errorf("%s: meta %s: %s is not a string", what, raw, f)
		}
	}
	for _, f := range []string{"last-modified", "size"} {
		n, ok := m[f].(float64)
		if !ok || n != float64(int64(n)) || n < 0 {
			t.Errorf("%s: meta %s: %s is not an integer", what, raw, f)
		}
	}
	if lm, _ := m["last-modified"].(float64); lm != 0 && (lm < float64(time.Now().Add(-24*time.Hour).UnixMilli()) || lm > float64(time.Now().Add(time.Hour).UnixMilli())) {
		t.Errorf("%s: meta %s: last-modified is not Unix milliseconds of today", what, raw)
	}
	if p := m["permissions"]; p != "ro" && p != "rw" {
		t.Errorf("%s: meta %s: permissions %v", what, raw, p)
	}
	if _, ok := m["extra"].(map[string]any); !ok {
		t.Errorf("%s: meta %s: extra is not an object", what, raw)
	}
	p, _ := m["path"].(string)
	if m["mime-type"] == "application/directory" {
		n, ok := m["item-count"].(float64)
		if !ok || n < 0 || !strings.HasSuffix(p, "/") || m["size"] != float64(0) || m["public-url"] != nil {
			t.Errorf("%s: folder meta %s: want item-count, a path ending in /, size 0, no public-url", what, raw)
		}
		if lm, _ := m["last-modified"].(float64); p != "/" && m["permissions"] == "rw" && lm == 0 {
			t.Errorf("%s: folder meta %s: last-modified unknown", what, raw)
		}
		return
	}
	pub, _ := m["public-url"].(string)
	u, err := url.Parse(pub)
	if err != nil || u.Scheme == "" || strings.ContainsAny(pub, " \"<>") || strings.HasSuffix(p, "/") {
		t.Errorf("%s: file meta %s: want an encoded public-url and a file path", what, raw)
	}
	if name, _ := m["name"].(string); path.Base(p) != name || !strings.HasSuffix(pub, "/"+url.PathEscape(name)) {
		t.Errorf("%s: file meta %s: name, path and public-url disagree", what, raw)
	}
	if th, ok := m["thumbnail"]; ok {
		if s, _ := th.(string); s == "" || strings.ContainsAny(s, " ") {
			t.Errorf("%s: file meta %s: thumbnail", what, raw)
		}
	}
}

// run sends one exchange and checks it.
func (c *conformance) run(t *testing.T, x confStep) {
	t.Helper()
	port := x.port
	if port == 0 {
		port = providerPort
	}
	res := send(t, port, x.call)
	what := fmt.Sprintf("%s: %s %s (%s)", c.b.name, x.method, x.target, x.name)
	c.transcript = append(c.transcript, fmt.Sprintf("%s → %d %s", x.name, res.Status, c.mask(res.Body)))
	if x.wantCode != 0 {
		row, _ := fsperrRow(x.wantCode)
		got := decodeFSP(res.Body)
		checkFSP(t, what, res, row.status, fspBody{x.wantCode, row.message, got.Details})
		if got.Details == "" || !strings.Contains(got.Details, x.wantDetails) {
			t.Errorf("%s: details %q, want %q in them", what, got.Details, x.wantDetails)
		}
		return
	}
	data, ok := successData(t, what, res)
	if !ok {
		return
	}
	if string(data) == "null" {
		if x.check != nil {
			x.check(t, c, dataJSON{})
		}
		return
	}
	var raw struct {
		Meta  json.RawMessage   `json:"meta"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &raw); err != nil || raw.Meta == nil {
		t.Errorf("%s: data %s has no meta", what, data)
		return
	}
	checkMetaFields(t, what, raw.Meta)
	for _, it := range raw.Items {
		checkMetaFields(t, what, it)
	}
	d := decodeData(t, data)
	// A move listing leaves files out of items but not out of the count.
	moveListing := slices.Contains(x.headers, "X-BEE-Fsp-Flags: move")
	if d.Meta.MimeType == "application/directory" && x.method == "GET" && !moveListing && (d.Meta.ItemCount == nil || *d.Meta.ItemCount != len(d.Items)) {
		t.Errorf("%s: item-count %s, %d items", what, count(d.Meta.ItemCount), len(d.Items))
	}
	if x.check != nil {
		x.check(t, c, d)
	}
}

// put stores data at the user's key directly in the storage, as another
// system would.
func (c *conformance) put(t *testing.T, key string, data []byte) {
	t.Helper()
	full := "c1/u1/" + key
	if c.b.bucket == "" {
		if err := os.MkdirAll(filepath.Join(c.b.files, filepath.Dir(filepath.FromSlash(full))), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c.b.write(t, full, data)
}

// fetchPublic reads the file at a public URL: through file_server for
// the local folder (the URL as the editor would use it), from the bucket
// for S3 (whose public base is a CDN that does not exist here).
func (c *conformance) fetchPublic(t *testing.T, public string) []byte {
	t.Helper()
	if c.b.bucket != "" {
		return c.b.read(t, keyOf(t, &env{b: c.b}, public))
	}
	res, err := http.Get(public)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Errorf("GET %s: %d", public, res.StatusCode)
	}
	return body
}

// count shows an item-count, which may be missing.
func count(n *int) string {
	if n == nil {
		return "missing"
	}
	return fmt.Sprint(*n)
}

func esc(name string) string { return url.PathEscape(name) }

// conformanceTable is the exchanges, in order.
func conformanceTable(src *sources) []confStep {
	u := func(p string) string { return src.URL + p }
	png := string(src.png2)
	wantItems := func(want ...string) func(*testing.T, *conformance, dataJSON) {
		return func(t *testing.T, _ *conformance, d dataJSON) {
			t.Helper()
			var got []string
			for _, m := range d.Items {
				got = append(got, m.Name)
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("items %q, want %q", got, want)
			}
		}
	}
	wantMeta := func(name, p string) func(*testing.T, *conformance, dataJSON) {
		return func(t *testing.T, _ *conformance, d dataJSON) {
			t.Helper()
			if d.Meta.Name != name || d.Meta.Path != p {
				t.Errorf("meta name %q path %q, want %q %q", d.Meta.Name, d.Meta.Path, name, p)
			}
		}
	}
	var x []confStep
	x = append(x,
		confStep{name: "list the root", call: call{method: "GET", target: "/"}, check: func(t *testing.T, _ *conformance, d dataJSON) {
			if d.Meta.Name != "root" || d.Meta.Path != "/" || d.Meta.MimeType != "application/directory" || d.Meta.Size != 0 {
				t.Errorf("root meta %+v", d.Meta)
			}
		}},
		confStep{name: "create a folder", call: call{method: "POST", target: "/mydir/"}, check: wantMeta("mydir", "/mydir/")},
		confStep{name: "create a folder with a space", call: call{method: "POST", target: "/mydir/new%20dir/"}, check: wantMeta("new dir", "/mydir/new dir/")},
		confStep{name: "create an existing folder", call: call{method: "POST", target: "/mydir/new%20dir/"}, wantCode: 3400},
		confStep{name: "create without parent", call: call{method: "POST", target: "/nope/sub/"}, wantCode: 3200},
		confStep{name: "create the root", call: call{method: "POST", target: "/"}, wantCode: 3400},
		confStep{name: "folder name .hidden", call: call{method: "POST", target: "/mydir/.hidden/"}, check: wantMeta(".hidden", "/mydir/.hidden/")},
		confStep{name: "folder name with a trailing space", call: call{method: "POST", target: "/mydir/trailing%20/"}, check: wantMeta("trailing ", "/mydir/trailing /")},
		confStep{name: "folder name ... ", call: call{method: "POST", target: "/mydir/...%20/"}, check: wantMeta("... ", "/mydir/... /")},
		confStep{name: "folder name in the pattern", call: call{method: "POST", target: "/mydir/a-b_c.(d)/"}, check: wantMeta("a-b_c.(d)", "/mydir/a-b_c.(d)/")},
		confStep{name: "folder name with a control character", call: call{method: "POST", target: "/mydir/a%07b/"}, wantCode: 3500, wantDetails: "control characters"},
		// Folder names keep to the contract's pattern [ a-zA-Z0-9._\-()]+.
		confStep{name: "folder name outside the pattern (é)", call: call{method: "POST", target: "/mydir/caf%C3%A9/"}, wantCode: 3500, wantDetails: "A folder name may hold only"},
		confStep{name: "folder name outside the pattern (&<>)", call: call{method: "POST", target: "/mydir/x%26y%3Cz%3E/"}, wantCode: 3500, wantDetails: "A folder name may hold only"},
		confStep{name: "folder name outside the pattern (?)", call: call{method: "POST", target: "/mydir/a%3Fb/"}, wantCode: 3500, wantDetails: "A folder name may hold only"},
		confStep{name: "folder name outside the pattern (,;=)", call: call{method: "POST", target: "/mydir/a,b;c=d/"}, wantCode: 3500, wantDetails: "A folder name may hold only"},
		confStep{name: "folder name ..", call: call{method: "POST", target: "/mydir/%2E%2E/"}, wantCode: 3300},
		confStep{name: "upload from a source", call: call{method: "POST", target: "/mydir/from%20source.png", body: upload(u("/cat.png"), "")}, check: func(t *testing.T, c *conformance, d dataJSON) {
			wantFile(t, d.Meta, "/mydir/from source.png", "image/png", len(c.src.png), true)
		}},
	)
	for _, name := range scriptNames {
		name := name
		x = append(x, confStep{name: "upload " + name, call: direct("/mydir/"+esc(name), png), check: func(t *testing.T, c *conformance, d dataJSON) {
			wantFile(t, d.Meta, "/mydir/"+name, "image/png", len(c.src.png2), true)
			if want := live(c.b.publicBase) + "/c1/u1/mydir/" + esc(name); d.Meta.PublicURL != want {
				t.Errorf("public-url %s, want %s", d.Meta.PublicURL, want)
			}
			if got := c.fetchPublic(t, d.Meta.PublicURL); !bytes.Equal(got, c.src.png2) {
				t.Errorf("%s: the public URL serves %d bytes, not the file", name, len(got))
			}
		}}, confStep{name: "metadata of " + name, call: call{method: "GET", target: "/mydir/" + esc(name)}, check: wantMeta(name, "/mydir/"+name)})
	}
	sorted := append([]string(nil), scriptNames...)
	sorted = append(sorted, "from source.png")
	sortStrings(sorted)
	x = append(x,
		confStep{name: "list in several scripts", call: call{method: "GET", target: "/mydir/"}, check: wantItems(append([]string{"... ", ".hidden", "a-b_c.(d)", "new dir", "trailing "}, sorted...)...)},
		confStep{name: "list for a move", call: call{method: "GET", target: "/mydir/", headers: []string{"X-BEE-Fsp-Flags: move"}}, check: func(t *testing.T, c *conformance, d dataJSON) {
			wantItems("... ", ".hidden", "a-b_c.(d)", "new dir", "trailing ")(t, c, d)
			// The folder's own count is of all its children, as in the plain listing.
			if want := 5 + len(sorted); d.Meta.ItemCount == nil || *d.Meta.ItemCount != want {
				t.Errorf("list for a move: item-count %s, want %d (files count too)", count(d.Meta.ItemCount), want)
			}
		}},
		confStep{name: "upload a name taken (ask)", call: call{method: "POST", target: "/mydir/" + esc("café.png"), body: upload(u("/cat.png"), "ask")}, wantCode: 3400},
		confStep{name: "upload a name taken (keep)", call: call{method: "POST", target: "/mydir/" + esc("café.png"), body: upload(u("/cat.png"), "keep")}, check: wantMeta("café_1.png", "/mydir/café_1.png")},
		confStep{name: "upload a name taken (replace)", call: call{method: "POST", target: "/mydir/" + esc("café.png"), body: upload(u("/cat.png"), "replace")}, check: wantMeta("café.png", "/mydir/café.png")},
		confStep{name: "folder named like a file", call: call{method: "POST", target: "/mydir/clash.png/"}},
		confStep{name: "upload onto a folder's name (replace)", call: call{method: "POST", target: "/mydir/clash.png", body: upload(u("/cat.png"), "replace")}, wantCode: 3400},
		confStep{name: "upload onto a folder's name (ask)", call: call{method: "POST", target: "/mydir/clash.png", body: upload(u("/cat.png"), "ask")}, wantCode: 3400},
		confStep{name: "upload onto a folder's name (direct)", call: direct("/mydir/clash.png", png), wantCode: 3400},
		confStep{name: "upload onto a folder's name (keep)", call: call{method: "POST", target: "/mydir/clash.png", body: upload(u("/cat.png"), "keep")}, check: wantMeta("clash_1.png", "/mydir/clash_1.png")},
		confStep{name: "a file named like a folder", call: direct("/clash.png", png), check: wantMeta("clash.png", "/clash.png")},
		confStep{name: "move onto a folder's name (replace)", call: call{method: "PATCH", target: "/clash.png", body: moveBody("/mydir/", "replace")}, wantCode: 3400},
		confStep{name: "move onto a folder's name (ask)", call: call{method: "PATCH", target: "/clash.png", body: moveBody("/mydir/", "")}, wantCode: 3400},
		confStep{name: "move onto a folder's name (keep)", call: call{method: "PATCH", target: "/clash.png", body: moveBody("/mydir/", "keep")}, check: wantMeta("clash_2.png", "/mydir/clash_2.png")},
		confStep{name: "a folder named like a file", call: call{method: "POST", target: "/mydir/clash_2.png/"}, wantCode: 3400},
	)
	for _, name := range scriptNames {
		name := name
		x = append(x,
			confStep{name: "move " + name, call: call{method: "PATCH", target: "/mydir/" + esc(name), body: moveBody("/mydir/new dir/", "")}, check: wantMeta(name, "/mydir/new dir/"+name)},
			confStep{name: "delete " + name, call: call{method: "DELETE", target: "/mydir/new%20dir/" + esc(name)}},
			confStep{name: "deleted " + name, call: call{method: "GET", target: "/mydir/new%20dir/" + esc(name)}, wantCode: 3200},
		)
	}
	x = append(x,
		confStep{name: "the emptied folder stays", call: call{method: "GET", target: "/mydir/new%20dir/"}, check: wantItems()},
		confStep{name: "delete a folder with content", call: call{method: "DELETE", target: "/mydir/"}, wantCode: 3500},
		confStep{name: "delete an empty folder", call: call{method: "DELETE", target: "/mydir/new%20dir/"}},
		confStep{name: "delete it again", call: call{method: "DELETE", target: "/mydir/new%20dir/"}, wantCode: 3200},
		confStep{name: "delete a hidden-looking folder", call: call{method: "DELETE", target: "/mydir/.hidden/"}},
		confStep{name: "delete a folder ending in a space", call: call{method: "DELETE", target: "/mydir/trailing%20/"}},
		confStep{name: "delete the root", call: call{method: "DELETE", target: "/"}, wantCode: 3300},
	)
	// The file manager's type groups, each checked by its content.
	for _, name := range []string{"clip.avi", "clip.mp4", "clip.webm", "song.mp3", "sound.ogg", "sound.wav"} {
		x = append(x, confStep{name: "upload " + name, call: direct("/mydir/"+name, mediaSamples[name]), check: wantMeta(name, "/mydir/"+name)})
	}
	x = append(x,
		confStep{name: "html is refused", call: direct("/mydir/page.html", "<html><script>alert(1)</script>"), wantCode: 3450},
		confStep{name: "svg is refused", call: direct("/mydir/x.svg", `<svg xmlns="http://www.w3.org/2000/svg"/>`), wantCode: 3450},
		confStep{name: "script is refused", call: direct("/mydir/x.js", "alert(1)"), wantCode: 3450},
		confStep{name: "a video that is not one", call: direct("/mydir/fake.mp4", "plain text"), wantCode: 3450},
		confStep{name: "too large", call: direct("/mydir/big.png", string(src.png[:100])+strings.Repeat("\x00", 400<<10)), wantCode: 3450, wantDetails: "the file is larger than"},
		confStep{name: "upload into a missing folder", call: direct("/nope/x.png", png), wantCode: 3200},
		confStep{name: "upload into a read-only folder", call: direct("/logos/x.png", png), wantCode: 3300},
		confStep{name: "metadata of a missing file", call: call{method: "GET", target: "/mydir/none.png"}, wantCode: 3200},
		confStep{name: "list a missing folder", call: call{method: "GET", target: "/none/"}, wantCode: 3200},
		confStep{name: "bad json", call: call{method: "POST", target: "/mydir/x.png", body: `{"source":`}, wantCode: 3500},
		confStep{name: "no credentials", call: call{method: "GET", target: "/", auth: "-"}, wantCode: 3650},
		confStep{name: "no uid", call: call{method: "GET", target: "/", uid: "-"}, wantCode: 3500},
		confStep{name: "a name too long", call: direct("/mydir/"+strings.Repeat("é", 130)+".png", png), wantCode: 3500, wantDetails: "at most 255 bytes"},
		confStep{name: "a reserved name", call: direct("/mydir/.thumb.x.png", png), wantCode: 3500, wantDetails: "kept for the file service's own files"},
		confStep{name: "a backslash", call: direct("/mydir/a%5Cb.png", png), wantCode: 3500},
		confStep{name: "a NUL", call: direct("/mydir/a%00b.png", png), wantCode: 3500, wantDetails: "control characters"},
		confStep{name: "a path too long for the storage", call: direct("/mydir/"+strings.Repeat(strings.Repeat("d", 200)+"/", 6)+"x.png", png), wantCode: 3500, wantDetails: "at most 1024 bytes"},
	)
	return x
}

// sortStrings sorts names as the listing does (byte order).
func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// foreignTable is what the user does with files another system put in the
// storage (the set-up puts them there): every listed one can be moved and
// deleted, counts agree with listings, a folder stays when its last file
// goes, and names no request could give are neither listed nor counted.
func foreignTable() []confStep {
	foreign := []string{"Ünïcödé report.pdf", "a&b (1).png", "x y.png", ".DS_Store", "图.png"}
	var x []confStep
	x = append(x,
		confStep{name: "the root counts what it lists", call: call{method: "GET", target: "/"}, check: func(t *testing.T, c *conformance, d dataJSON) {
			for _, m := range d.Items {
				if m.MimeType != "application/directory" || m.Name == "logos" {
					continue
				}
				res := send(t, providerPort, call{method: "GET", target: "/" + esc(m.Name) + "/"})
				var sub struct {
					Data dataJSON `json:"data"`
				}
				_ = json.Unmarshal(res.Body, &sub)
				if m.ItemCount == nil || *m.ItemCount != len(sub.Data.Items) {
					t.Errorf("%s: item-count %s in the root, %d items listed", m.Name, count(m.ItemCount), len(sub.Data.Items))
				}
			}
		}},
		confStep{name: "list foreign files", call: call{method: "GET", target: "/legacy/"}, check: func(t *testing.T, _ *conformance, d dataJSON) {
			want := append([]string(nil), foreign...)
			sortStrings(want)
			var got []string
			for _, m := range d.Items {
				got = append(got, m.Name)
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("items %q, want %q", got, want)
			}
		}},
		confStep{name: "names no request could give are not listed", call: call{method: "GET", target: "/odd/"}, check: func(t *testing.T, _ *conformance, d dataJSON) {
			if len(d.Items) != 0 || *d.Meta.ItemCount != 0 {
				t.Errorf("odd/ lists %+v", d.Items)
			}
		}},
		confStep{name: "a folder without marker", call: call{method: "GET", target: "/ext/"}, check: func(t *testing.T, _ *conformance, d dataJSON) {
			if len(d.Items) != 1 || d.Meta.LastModified == 0 {
				t.Errorf("ext/ %+v", d)
			}
		}},
		confStep{name: "delete its last file", call: call{method: "DELETE", target: "/ext/only.png"}},
		confStep{name: "the folder stays", call: call{method: "GET", target: "/ext/"}, check: func(t *testing.T, _ *conformance, d dataJSON) {
			if len(d.Items) != 0 {
				t.Errorf("ext/ %+v", d.Items)
			}
		}},
		confStep{name: "and is listed", call: call{method: "GET", target: "/"}, check: func(t *testing.T, _ *conformance, d dataJSON) {
			if !strings.Contains("|"+names(d.Items)+"|", ",ext,") && !strings.Contains(","+names(d.Items)+",", ",ext,") {
				t.Errorf("root %s", names(d.Items))
			}
		}},
		confStep{name: "mkdir target", call: call{method: "POST", target: "/moved/"}},
	)
	for _, name := range foreign {
		x = append(x,
			confStep{name: "move foreign " + name, call: call{method: "PATCH", target: "/legacy/" + esc(name), body: moveBody("/moved/", "")}},
			confStep{name: "delete foreign " + name, call: call{method: "DELETE", target: "/moved/" + esc(name)}},
		)
	}
	x = append(x,
		confStep{name: "delete the emptied foreign folder", call: call{method: "DELETE", target: "/legacy/"}},
		confStep{name: "a folder holding only names no request can give", call: call{method: "DELETE", target: "/odd/"}, wantCode: 3500, wantDetails: "names the file manager cannot show"},
		confStep{name: "a folder holding only a thumbnail of nothing", call: call{method: "DELETE", target: "/orphan/"}},
		confStep{name: "the storage fails", call: call{method: "GET", target: "/", auth: "-", port: brokenPort}, wantCode: 3100},
	)
	return x
}

// TestConformance runs the tables on both back ends and compares their
// answers exchange by exchange.
func TestConformance(t *testing.T) {
	t.Setenv("FSP_TEST_S3_ACCESS", s3Access)
	t.Setenv("FSP_TEST_S3_SECRET", s3Secret)
	src := newSources(t)
	hash, err := bcrypt.GenerateFromPassword([]byte(fspPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]*conformance{}
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			c := &conformance{b: bk.make(t), src: src}
			load(t, providerSites(c.b, src, "", string(hash)))
			for _, x := range conformanceTable(src) {
				c.run(t, x)
			}
			// Files another system put there.
			for _, key := range []string{"legacy/Ünïcödé report.pdf", "legacy/a&b (1).png", "legacy/x y.png", "legacy/.DS_Store", "legacy/图.png", "odd/a\\b.png", "ext/only.png", "orphan/.thumb.gone.png.png"} {
				c.put(t, key, src.png2)
			}
			if c.b.bucket == "" {
				// An S3 listing (XML) cannot carry a control character.
				c.put(t, "odd/bell\x07.png", src.png2)
			}
			for _, x := range foreignTable() {
				c.run(t, x)
			}
			runs[bk.name] = c
		})
	}
	local, s3 := runs["local"], runs["s3"]
	if local == nil || s3 == nil {
		t.Log("one back end did not run: the answers are not compared")
		return
	}
	if len(local.transcript) != len(s3.transcript) {
		t.Fatalf("%d exchanges locally, %d on S3", len(local.transcript), len(s3.transcript))
	}
	for i := range local.transcript {
		if local.transcript[i] != s3.transcript[i] {
			t.Errorf("the back ends answer differently:\nlocal %s\ns3    %s", local.transcript[i], s3.transcript[i])
		}
	}
}

// TestProviderCannotHoldCustomError: a storage that cannot hold some
// characters in a name answers an upload of such a name with the custom
// 39xx error of the vendor's example (an fsp_error rule in front of fsp,
// naming the characters), on both back ends; every other name is stored.
func TestProviderCannotHoldCustomError(t *testing.T) {
	const port = 9223
	want := fspBody{3901, "Upload error", "File names may not contain any of: ? *"}
	png := string(testPNG(10, 10, color.NRGBA{1, 2, 3, 255}))
	onEachBackend(t, func(t *testing.T, b backend) {
		load(t, fmt.Sprintf(`:%d {
	handle_path /fsp/* {
		@cannotHold {
			method POST
			vars_regexp {http.request.orig_uri} `+"`"+`^[^?]*/[^/?]*(%%3[Ff]|%%2[Aa]|\*)[^/?]*(\?.*)?$`+"`"+`
		}
		fsp_error @cannotHold 3901 {
			status 400
			message "Upload error"
			details "File names may not contain any of: ? *"
		}
		fsp {
			%s
			public_url %s
			allow_anonymous
		}
	}
}
`, port, b.storage, b.publicBase))
		before := b.keys(t)
		for _, name := range []string{"what?.png", "star*.png", "x?y*z.png"} {
			c := direct("/"+esc(name), png)
			c.auth = "-"
			res := send(t, port, c)
			checkFSP(t, name, res, 400, want)
		}
		if after := b.keys(t); strings.Join(after, "|") != strings.Join(before, "|") {
			t.Errorf("refused uploads changed the storage: %v", after)
		}
		for _, name := range []string{"café.png", "图片.png", "a|b.png", "100%.png", "a%3Fb.png"} {
			c := direct("/"+esc(name), png)
			c.auth = "-"
			res := send(t, port, c)
			var ok struct {
				Data dataJSON `json:"data"`
			}
			if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil || ok.Data.Meta.Name != name {
				t.Errorf("%s: %d %s", name, res.Status, res.Body)
			}
		}
	})
}
