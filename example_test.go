package designbridge

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestExampleFSPCredential: the example's FSP password hash is of a low
// bcrypt cost (a wrong password must not cost the server a CPU-second:
// the credential is long and random, so the cost buys nothing), matches
// the password .env.example names; Caddyfile.example reads it from the
// environment at load ({env.…}), so a reload without it fails loudly
// instead of leaving basic_auth with no account.
func TestExampleFSPCredential(t *testing.T) {
	env, err := os.ReadFile(".env.example")
	if err != nil {
		t.Fatal(err)
	}
	caddyfile, err := os.ReadFile("Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(caddyfile), "{env.FSP_USER} {env.FSP_PASSWORD_HASH}") {
		t.Error("Caddyfile.example does not take the FSP credentials from {env.FSP_USER} {env.FSP_PASSWORD_HASH}")
	}
	hashRE := regexp.MustCompile(`\$2[aby]?\$\d\d\$[./A-Za-z0-9]{53}`)
	envHash := regexp.MustCompile(`(?m)^FSP_PASSWORD_HASH=(\S+)$`).FindSubmatch(env)
	password := regexp.MustCompile(`This hash is of\s+#?\s*(\S+)\.\n`).FindSubmatch(env)
	if envHash == nil || password == nil {
		t.Fatal(".env.example names no FSP_PASSWORD_HASH or no password it is of")
	}
	for _, h := range append(hashRE.FindAll(caddyfile, -1), envHash[1]) {
		cost, err := bcrypt.Cost(h)
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		if cost > 6 {
			t.Errorf("hash %s has cost %d: every wrong password costs the server that much CPU; a long random machine credential needs cost 4", h, cost)
		}
		if err := bcrypt.CompareHashAndPassword(h, password[1]); err != nil {
			t.Errorf("hash %s is not of the password .env.example names (%s)", h, password[1])
		}
	}
	if pw := string(password[1]); len(strings.TrimPrefix(pw, "local-dev-fsp-")) < 32 {
		t.Errorf("the example's password %q is not long and random", pw)
	}
}
