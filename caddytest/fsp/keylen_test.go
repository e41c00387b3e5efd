package fsp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestProviderKeyLength: a whole storage key is at most 1024 bytes (S3's
// limit, kept on both back ends), counting an S3 prefix: a path that
// fits only without the prefix is refused (3500) as too long, not
// answered as a storage failure (3100), and an upload or move of a path
// that fits stores it.
func TestProviderKeyLength(t *testing.T) {
	src := newSources(t)
	onEachBackend(t, func(t *testing.T, b backend) {
		storage := b.storage
		prefix := ""
		if b.name == "s3" {
			prefix = "tenant-a/files" // 15 bytes with its "/"
			storage = strings.Replace(storage, "insecure", "insecure\n\t\t\t\tprefix /"+prefix+"/", 1)
		}
		anonymousSite(t, storage)
		// Four folders of 240 bytes: with "c1/u1" they take 970
		// bytes of the key.
		dir := "/"
		for i := range 4 {
			dir += fmt.Sprintf("%d%s/", i, strings.Repeat("d", 239))
			if res := send(t, privatePort, call{method: "POST", target: dir, auth: "-"}); res.Status != 200 {
				t.Fatalf("mkdir %d: %d %s", i, res.Status, res.Body)
			}
		}
		room := 1024 - len("c1/u1") - len(dir) // bytes left for a name
		if prefix != "" {
			room -= len(prefix) + 1
		}
		pdf := func(n int) string { return strings.Repeat("p", n-len(".pdf")) + ".pdf" }
		png := func(n int) string { return strings.Repeat("i", n-len(".png")) + ".png" }
		thumbExtra := len(".thumb.") + len(".png")
		for _, row := range []struct {
			name      string
			call      call
			wantCode  int
			wantThumb bool
		}{
			{"an image whose thumbnail fits", direct(dir+png(room-thumbExtra), string(src.png2)), 0, true},
			{"an image whose thumbnail would be over", direct(dir+png(room-thumbExtra+1), string(src.png2)), 0, false},
			{"a name that fits", direct(dir+pdf(room), string(src.pdf)), 0, false},
			{"a keep upload whose free name would be over", withStrategy(direct(dir+pdf(room), string(src.pdf)), "keep"), 3400, false},
			{"a folder that fits, its marker's / included", call{method: "POST", target: dir + strings.Repeat("f", room-1) + "/"}, 0, false},
			{"a folder one byte over", call{method: "POST", target: dir + strings.Repeat("g", room) + "/"}, 3500, false},
			{"a name one byte over", direct(dir+pdf(room+1), string(src.pdf)), 3500, false},
			{"a move to a path one byte over", call{method: "PATCH", target: "/" + pdf(room+1), body: moveBody(dir, "")}, 3500, false},
		} {
			if strings.HasPrefix(row.call.method, "PATCH") {
				// its source, at the top
				c := direct(row.call.target, string(src.pdf))
				c.auth = "-"
				if res := send(t, privatePort, c); res.Status != 200 {
					t.Fatalf("%s: storing the source: %d %s", row.name, res.Status, res.Body)
				}
			}
			row.call.auth = "-"
			res := send(t, privatePort, row.call)
			if row.wantCode == 0 {
				var ok struct {
					Data dataJSON `json:"data"`
				}
				if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil {
					t.Errorf("%s: %d %s, want success", row.name, res.Status, res.Body)
				} else if got := ok.Data.Meta.Thumbnail != ""; got != row.wantThumb {
					t.Errorf("%s: thumbnail %v, want %v", row.name, got, row.wantThumb)
				}
				continue
			}
			var got fspBody
			_ = json.Unmarshal(res.Body, &got)
			if got.Code != row.wantCode || (row.wantCode == 3500 && !strings.Contains(got.Details, "at most 1024 bytes")) {
				t.Errorf("%s: %d %s, want %d", row.name, res.Status, res.Body, row.wantCode)
			}
		}
	})
}
