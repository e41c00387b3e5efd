package testcaddy

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/certmagic"
)

// PrivateHome is for TestMain: it makes a temporary folder and points
// HOME and the XDG directories into it, and with them what Caddy computed
// from them when its package was initialised, before TestMain ran: the
// autosaved config and the certificate storage. The tests then never
// write into the real home. remove deletes the folder.
func PrivateHome(prefix string) (dir string, remove func(), err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	remove = func() { _ = os.RemoveAll(dir) }
	paths := map[string]string{
		"HOME":            filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"),
		"XDG_DATA_HOME":   filepath.Join(dir, "data"),
	}
	for name, path := range paths {
		if err := os.MkdirAll(path, 0o700); err != nil {
			remove()
			return "", nil, err
		}
		if err := os.Setenv(name, path); err != nil {
			remove()
			return "", nil, err
		}
	}
	caddy.ConfigAutosavePath = filepath.Join(paths["XDG_CONFIG_HOME"], "caddy", "autosave.json")
	caddy.DefaultStorage = &certmagic.FileStorage{Path: filepath.Join(paths["XDG_DATA_HOME"], "caddy")}
	return dir, remove, nil
}

// PageDir makes a folder for one test's pages under root (the site root
// that a package's Caddy config names, shared by every run of the
// package: the folder's name starts with the process id) and removes it
// after the test.
func PageDir(t testing.TB, root string) string {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(root, fmt.Sprintf("%d-", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
