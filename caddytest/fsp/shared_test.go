package fsp

import (
	"encoding/json"
	"testing"
)

// TestProviderSharedOverlap: a user whose folder would be a shared folder,
// lie inside one or hold one is refused (3600), on each back end: with
// the default root, client "shared" and uid "logos" would otherwise write
// into the folder every user reads as /logos/ (read-only for them), and
// the users of client c2 would store their files in the folder every user
// reads as /team/. Other users are served, and nothing reaches the shared
// folders.
func TestProviderSharedOverlap(t *testing.T) {
	src := newSources(t)
	onEachBackend(t, func(t *testing.T, b backend) {
		load(t, fspSite(privatePort, b.storage, "shared logos shared/logos", "shared team c2", "allow_anonymous")+
			fspSite(brokenPort, b.storage, "root {http.request.header.X-BEE-Uid}", "shared logos logos", "allow_anonymous"))
		put := func(port int, client, uid, target string) call {
			c := direct(target, string(src.png2))
			c.port, c.client, c.uid, c.auth = port, client, uid, "-"
			return c
		}
		for _, row := range []struct {
			name     string
			call     call
			wantCode int
		}{
			{"default root: the user folder is the shared folder", put(privatePort, "shared", "logos", "/x.png"), 3600},
			{"default root: listing it", call{method: "GET", target: "/", client: "shared", uid: "logos", auth: "-", port: privatePort}, 3600},
			{"default root: the user folder is inside the shared folder", put(privatePort, "c2", "bob", "/x.png"), 3600},
			{"default root: a folder beside the shared one", put(privatePort, "shared", "logos2", "/x.png"), 0},
			{"default root: the shared folder's parent's sibling", put(privatePort, "shared", "u", "/x.png"), 0},
			{"uid root: the user folder is the shared folder", put(brokenPort, "c1", "logos", "/x.png"), 3600},
			{"uid root: another user", put(brokenPort, "c1", "alice", "/x.png"), 0},
		} {
			res := send(t, row.call.port, row.call)
			if row.wantCode == 0 {
				if res.Status != 200 {
					t.Errorf("%s: %d %s, want success", row.name, res.Status, res.Body)
				}
				continue
			}
			body, _ := fsperrRow(row.wantCode)
			checkFSP(t, row.name, res, body.status, fspBody{row.wantCode, body.message, "The storage configured for this user is not valid"})
		}
		for _, c := range []call{
			{method: "GET", target: "/logos/", port: privatePort},
			{method: "GET", target: "/team/", port: privatePort},
			{method: "GET", target: "/logos/", port: brokenPort},
		} {
			c.auth = "-"
			res := send(t, c.port, c)
			var ok struct {
				Data dataJSON `json:"data"`
			}
			if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil {
				t.Fatalf("GET %s: %d %s", c.target, res.Status, res.Body)
			}
			if len(ok.Data.Items) != 0 {
				t.Errorf("GET %s on %d: %s, want nothing stored in the shared folder", c.target, c.port, names(ok.Data.Items))
			}
		}
	})
}
