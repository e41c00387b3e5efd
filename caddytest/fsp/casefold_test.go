package fsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProviderUserFoldersKeepCase: on a case-sensitive folder (Linux's
// default) the users "Bob" and "bob" keep the folders c1/Bob and c1/bob, as
// before; where the temporary folder ignores case (macOS, Windows), it
// checks what TestProviderCaseInsensitiveFolder checks on Linux.
func TestProviderUserFoldersKeepCase(t *testing.T) {
	store := t.TempDir()
	if err := os.WriteFile(filepath.Join(store, "Probe"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := os.Lstat(filepath.Join(store, "pROBE"))
	folds := err == nil
	if err := os.Remove(filepath.Join(store, "Probe")); err != nil {
		t.Fatal(err)
	}
	checkCaseUsers(t, store, folds)
}

// checkCaseUsers has the users "bob" and "Bob" of client c1 store a file
// each in the local folder store and checks that neither lists, reads or
// deletes the other's, that their folders are named as docs/fsp.md says
// (Bob's is "~42ob" where store ignores case, "Bob" elsewhere), and that
// the load logged once whether capitals are escaped. Where store ignores
// case, the user folder of client "shared", uid "logos" is the shared
// folder Shared/Logos, and is refused (3600).
func checkCaseUsers(t *testing.T, store string, folds bool) {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	global := strings.Replace(globalOptions(), "\n}\n", fmt.Sprintf("\n\tlog {\n\t\toutput file %s\n\t\tformat json\n\t}\n}\n", logFile), 1)
	loadCaddyfile(t, global+fmt.Sprintf(`:%d {
	handle_path /fsp/* {
		fsp {
			local %s
			public_url http://localhost/files
			shared logos Shared/Logos
			allow_anonymous
		}
	}
}
`, privatePort, store))
	// Caddy lets go of the folder before the test's cleanups remove it.
	t.Cleanup(func() { load(t, fmt.Sprintf(":%d {\n\trespond ok\n}\n", privatePort)) })

	src := newSources(t)
	as := func(uid string, c call) response {
		c.uid, c.auth = uid, "-"
		return send(t, privatePort, c)
	}
	list := func(uid string) string {
		res := as(uid, call{method: "GET", target: "/"})
		var ok struct {
			Data dataJSON `json:"data"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil {
			t.Fatalf("GET / as %s: %d %s", uid, res.Status, res.Body)
		}
		return names(ok.Data.Items)
	}
	if res := as("bob", direct("/bobs.png", string(src.png2))); res.Status != 200 {
		t.Fatalf("bob's upload: %d %s", res.Status, res.Body)
	}
	// Every user sees the shared folder first.
	if got := list("Bob"); got != "logos" {
		t.Errorf("Bob lists %q, bob's files; want only the shared logos", got)
	}
	if res := as("Bob", call{method: "GET", target: "/bobs.png"}); decodeFSP(res.Body).Code != 3200 {
		t.Errorf("Bob reads bob's file: %d %s, want 3200", res.Status, res.Body)
	}
	if res := as("Bob", call{method: "DELETE", target: "/bobs.png"}); decodeFSP(res.Body).Code != 3200 {
		t.Errorf("Bob deletes bob's file: %d %s, want 3200", res.Status, res.Body)
	}
	if res := as("Bob", direct("/Bobs.png", string(src.png))); res.Status != 200 {
		t.Fatalf("Bob's upload: %d %s", res.Status, res.Body)
	}
	if got := list("bob"); got != "logos,bobs.png" {
		t.Errorf("bob lists %q, want logos,bobs.png", got)
	}
	if got := list("Bob"); got != "logos,Bobs.png" {
		t.Errorf("Bob lists %q, want logos,Bobs.png", got)
	}

	res := send(t, privatePort, call{method: "POST", target: "/x/", client: "shared", uid: "logos", auth: "-"})
	if code := decodeFSP(res.Body).Code; folds && code != 3600 || !folds && res.Status != 200 {
		t.Errorf("client shared, uid logos, beside the shared folder Shared/Logos: %d %s", res.Status, res.Body)
	}

	want := []string{"Bob", "bob"}
	if folds {
		want = []string{"bob", "~42ob"}
	}
	var got []string
	entries, err := os.ReadDir(filepath.Join(store, "c1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the users' folders in c1 are %q, want %q", got, want)
	}
	got = nil
	entries, _ = os.ReadDir(store)
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want = []string{"c1", "shared"}
	if folds {
		want = want[:1]
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the storage folder holds %q, want %q (and not the load's test file)", got, want)
	}

	logged := 0
	for _, e := range readLog(t, logFile) {
		if msg, _ := e["msg"].(string); e["logger"] == "http.handlers.fsp" && strings.Contains(msg, "ignores letter case") {
			logged++
			if e["folder"] != store {
				t.Errorf("the log names the folder %v, want %s", e["folder"], store)
			}
		}
	}
	if folds && logged != 1 || !folds && logged != 0 {
		t.Errorf("logged %d times that the folder ignores letter case (it does: %v)", logged, folds)
	}
}
