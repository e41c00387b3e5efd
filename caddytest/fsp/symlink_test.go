package fsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// TestProviderLocalFollowsNoSymlink: symbolic links that another program
// put into a user's tree (an unpacked archive, a shell account on the
// folder) are not files or folders of the FSP. One pointing into another
// user's tree, or into a shared folder, must not let the user list, read,
// write, move or delete anything there: every request through one is
// 3200, as for a name that is not there, and the other trees stay as
// they were. (S3 has no links.)
func TestProviderLocalFollowsNoSymlink(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("links are refused race-free with openat2, on Linux")
	}
	b := localBackend(t)
	anonymousSite(t, b.storage, "shared logos shared/logos")
	store := b.files
	for _, dir := range []string{"c1/u1/own", "c1/u2/d", "shared/logos"} {
		if err := os.MkdirAll(filepath.Join(store, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for key, text := range map[string]string{
		"c1/u1/mine.txt":      "mine",
		"c1/u2/secret.txt":    "secret",
		"shared/logos/a.txt":  "logo",
		"c1/u1/own/stays.txt": "stays",
	} {
		if err := os.WriteFile(filepath.Join(store, key), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"c1/u1/other":    "../u2",            // another user's tree
		"c1/u1/peek.txt": "../u2/secret.txt", // another user's file
		// The read-only shared folder, relative inside the temporary
		// store (os.Root would refuse an absolute link outright).
		"c1/u1/shared": filepath.Join("..", "..", "shared", "logos"),
		"c1/u1/own/up": "..", // a loop inside the user's own tree
		"c1/u3":        "u2", // a user's whole tree
	} {
		if err := os.Symlink(target, filepath.Join(store, link)); err != nil {
			t.Fatal(err)
		}
	}
	before := b.keys(t)
	part := func(content string) string {
		return "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n" + content + "\r\n--XyZ--\r\n"
	}
	for _, c := range []struct {
		name   string
		call   call
		upload string // a direct upload to this target instead of call
		status int    // default 404 (3200)
	}{
		{name: "list a linked folder", call: call{method: "GET", target: "/other/"}},
		{name: "list a folder inside it", call: call{method: "GET", target: "/other/d/"}},
		{name: "a file's meta through a linked folder", call: call{method: "GET", target: "/other/secret.txt"}},
		{name: "a linked file's meta", call: call{method: "GET", target: "/peek.txt"}},
		{name: "make a folder in a linked folder", call: call{method: "POST", target: "/other/new/"}},
		{name: "delete a file through a linked folder", call: call{method: "DELETE", target: "/other/secret.txt"}},
		{name: "delete a folder through a linked folder", call: call{method: "DELETE", target: "/other/d/"}},
		{name: "move a file out of a linked folder", call: call{method: "PATCH", target: "/other/secret.txt", body: `{"new_path":"/"}`}},
		{name: "move a file into a linked folder", call: call{method: "PATCH", target: "/mine.txt", body: `{"new_path":"/other/"}`}},
		{name: "delete through a link to the shared folder", call: call{method: "DELETE", target: "/shared/a.txt"}},
		{name: "list through a link in a loop", call: call{method: "GET", target: "/own/up/own/"}},
		{name: "a file in a user root that is a link", call: call{method: "GET", target: "/secret.txt", uid: "u3"}},
		// The user's root always exists: a link there is the storage's
		// failure (3100, logged), not an empty folder.
		{name: "a user root that is a link", call: call{method: "GET", target: "/", uid: "u3"}, status: 503},
		{name: "a folder in a user root that is a link", call: call{method: "POST", target: "/new/", uid: "u3"}, status: 503},
		{name: "upload into a linked folder", upload: "/other/x.txt"},
		{name: "upload into a link to the shared folder", upload: "/shared/x.txt"},
		{name: "upload replacing through a linked folder", upload: "/other/secret.txt?"},
		{name: "upload into a user root that is a link", upload: "u3:/x.txt", status: 503},
		// Deleting a link's name removes the link, never what it points to.
		{name: "delete a linked file", call: call{method: "DELETE", target: "/peek.txt"}, status: 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			var res response
			if c.upload != "" {
				uid, target := "u1", c.upload
				if len(target) > 3 && target[2] == ':' {
					uid, target = target[:2], target[3:]
				}
				res = sendBody(t, privatePort, uid, target, part("planted text"), 0)
			} else {
				c.call.auth = "-"
				res = send(t, privatePort, c.call)
			}
			want := map[int]int{0: 3200, 200: 0, 503: 3100}[c.status]
			if c.status == 0 {
				c.status = 404
			}
			var body struct {
				Code int `json:"code"`
			}
			_ = json.Unmarshal(res.Body, &body)
			if res.Status != c.status || body.Code != want {
				t.Errorf("%d %s, want %d with %d", res.Status, res.Body, c.status, want)
			}
		})
	}
	before = slices.DeleteFunc(before, func(k string) bool { return k == "c1/u1/peek.txt" })
	if after := b.keys(t); !slices.Equal(before, after) {
		t.Errorf("the storage changed:\nbefore %v\nafter  %v", before, after)
	}
}
