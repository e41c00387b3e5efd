// Package designtest gives tests the designs they run on: the project's own
// test designs, always present in a clone, and the third-party design
// corpus, which the project may not ship and which tests read from the
// folder named by the DESIGN_CORPUS environment variable.
// Test-only: no product package imports it.
package designtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// EnvVar names the environment variable that points at the corpus folder.
const EnvVar = "DESIGN_CORPUS"

// SkipMessage is the one line a corpus test skips with when EnvVar is unset.
const SkipMessage = EnvVar + " is not set: set it to a folder of third-party designs (*.json, with pairs/ for the vendor's HTML) to run this test"

// CorpusDir returns the corpus folder, skipping the test when EnvVar is
// unset and failing it when EnvVar names a folder that is missing or holds
// no design: a misspelt path must not pass as a skipped run.
func CorpusDir(tb testing.TB) string {
	tb.Helper()
	dir, err := Lookup()
	if err != nil {
		tb.Fatal(err)
	}
	if dir == "" {
		tb.Skip(SkipMessage)
	}
	return dir
}

// Lookup is CorpusDir for code without a testing.TB (a TestMain): it
// returns "" when EnvVar is unset and an error when it is set but names a
// folder that is missing or holds no *.json file.
func Lookup() (string, error) {
	dir := os.Getenv(EnvVar)
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	files, _ := filepath.Glob(filepath.Join(abs, "*.json"))
	if len(files) == 0 {
		return "", &corpusError{dir: dir}
	}
	return abs, nil
}

type corpusError struct{ dir string }

func (e *corpusError) Error() string {
	return EnvVar + "=" + e.dir + " holds no *.json design (missing or empty folder)"
}

// CorpusDesigns returns the corpus's whole designs, name → bytes, with the
// designs of pairs/ under "pairs-<name>" when withPairs is set. Files that
// are not a design (no "page" member) are left out. It skips like
// CorpusDir.
func CorpusDesigns(tb testing.TB, withPairs bool) map[string][]byte {
	tb.Helper()
	dir := CorpusDir(tb)
	out := readDesigns(tb, filepath.Join(dir, "*.json"), "")
	if withPairs {
		for k, v := range readDesigns(tb, filepath.Join(dir, "pairs", "*.json"), "pairs-") {
			out[k] = v
		}
	}
	return out
}

// CorpusFiles returns the paths of every *.json file of the corpus, those
// of pairs/ too when withPairs is set, designs or not (pairs/ also holds
// popup configurations and Simple Schema requests). It skips like
// CorpusDir.
func CorpusFiles(tb testing.TB, withPairs bool) []string {
	tb.Helper()
	dir := CorpusDir(tb)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if withPairs {
		more, _ := filepath.Glob(filepath.Join(dir, "pairs", "*.json"))
		files = append(files, more...)
	}
	return files
}

// CorpusFile returns one corpus file by its name relative to the corpus
// folder. It skips like CorpusDir.
func CorpusFile(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(CorpusDir(tb), filepath.FromSlash(name)))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// IsDesign reports whether data is a whole design (an object with a
// "page" member), as opposed to the other JSON files a corpus holds.
func IsDesign(data []byte) bool {
	var probe map[string]json.RawMessage
	return json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &probe) == nil && probe["page"] != nil
}

// Own returns the project's own test designs, name → bytes: the renderer's
// fixtures (one per block kind and row layout, rich text, sanitising) and
// the example page's starter designs. They are in every clone.
func Own(tb testing.TB) map[string][]byte {
	tb.Helper()
	out := readDesigns(tb, filepath.Join(Root(), "render", "testdata", "fixtures", "*.json"), "fixture-")
	for k, v := range readDesigns(tb, filepath.Join(Root(), "www", "designs", "*.json"), "starter-") {
		out[k] = v
	}
	if len(out) == 0 {
		tb.Fatal("the project's own test designs are missing")
	}
	return out
}

// OwnFile returns one of the project's own designs by the name Own gives it.
func OwnFile(tb testing.TB, name string) []byte {
	tb.Helper()
	d, ok := Own(tb)[name]
	if !ok {
		tb.Fatalf("no own test design %q", name)
	}
	return d
}

// OwnAndCorpus returns Own plus, when EnvVar is set, CorpusDesigns; it
// does not skip when the corpus is absent, so the test still runs on the
// project's own designs, and logs that it did.
func OwnAndCorpus(tb testing.TB, withPairs bool) map[string][]byte {
	tb.Helper()
	out := Own(tb)
	dir, err := Lookup()
	if err != nil {
		tb.Fatal(err)
	}
	if dir == "" {
		tb.Log("own designs only; " + SkipMessage)
		return out
	}
	for k, v := range CorpusDesigns(tb, withPairs) {
		out[k] = v
	}
	return out
}

// Names returns the keys of designs in order, for stable subtests.
func Names(designs map[string][]byte) []string {
	names := make([]string, 0, len(designs))
	for k := range designs {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Root is the repository's root folder.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func readDesigns(tb testing.TB, pattern, prefix string) map[string][]byte {
	tb.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		if !IsDesign(data) {
			continue
		}
		out[prefix+strings.TrimSuffix(filepath.Base(f), ".json")] = data
	}
	return out
}
