package fsp

import (
	"os"
	"strings"
	"testing"
)

// TestCaseInsensitiveProbe: on a case-sensitive folder the probe says so
// and leaves nothing behind; a folder it cannot write in is an error that
// says what was tried. (A folder that ignores case is probed through a
// real Caddy in caddytest/fsp, where the machine can mount one.)
func TestCaseInsensitiveProbe(t *testing.T) {
	dir := t.TempDir()
	s, err := newLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	probe := dir + "/" + "Probe"
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir + "/" + swapCase("Probe")); err == nil {
		t.Skip("the temporary folder ignores letter case")
	}
	os.Remove(probe)
	if fold, err := s.caseInsensitive(); fold || err != nil {
		t.Errorf("case-sensitive folder: caseInsensitive() = %v, %v; want false, nil", fold, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the probe left %v", entries)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := s.caseInsensitive(); err == nil || !strings.Contains(err.Error(), "ignores letter case") {
		t.Errorf("removed folder: caseInsensitive() error %v, want one saying what it was for", err)
	}
}

func TestSwapCase(t *testing.T) {
	if got := swapCase(".tmp-Case-Probe-0a9f-x é"); got != ".TMP-cASE-pROBE-0A9F-X é" {
		t.Errorf("swapCase = %q", got)
	}
}
