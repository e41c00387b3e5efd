package design

import (
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkParse times the JSON parser alone (no typed view) per corpus
// design, to tell parsing cost from building the model.
func BenchmarkParse(b *testing.B) {
	files, _ := filepath.Glob("../../shared/corpus/*.json")
	if len(files) == 0 {
		b.Skip("no corpus")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseDocument(string(data), DefaultLimits()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWordMasks checks the word-at-a-time masks against a byte loop on
// random words rich in the bytes that matter.
func TestWordMasks(t *testing.T) {
	pick := []byte{'"', '\\', 0, 0x1f, 0x20, 'a', '!', 0x7f, 0x80, 0xa2, 0xdc, 0xff, '#', '[', ']'}
	rng := uint64(0x9e3779b97f4a7c15)
	first := func(b []byte, stop func(byte) bool) int {
		for i, c := range b {
			if stop(c) {
				return i
			}
		}
		return 8
	}
	lowest := func(m uint64) int {
		if m == 0 {
			return 8
		}
		return bits.TrailingZeros64(m) / 8
	}
	for range 200_000 {
		var b [8]byte
		for i := range b {
			rng ^= rng << 13
			rng ^= rng >> 7
			rng ^= rng << 17
			b[i] = pick[rng%uint64(len(pick))]
		}
		x := load64(string(b[:]), 0)
		if got, want := lowest(quoteOrBackslash(x)), first(b[:], func(c byte) bool { return c == '"' || c == '\\' }); got != want {
			t.Fatalf("quoteOrBackslash(%q) = %d, want %d", b, got, want)
		}
		if got, want := lowest(stringStop(x)), first(b[:], func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }); got != want {
			t.Fatalf("stringStop(%q) = %d, want %d", b, got, want)
		}
	}
}

// FuzzParseLength: the whole-number shortcut answers as ParseFloat does.
func FuzzParseLength(f *testing.F) {
	for _, s := range []string{"10px", " 0 ", "12.5PX", "-3px", "007em", "1e3px", "100%", "", "px", "999999999px", "+5px"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, unit, ok := ParseLength(s)
		t2 := strings.TrimSpace(s)
		end := 0
		for end < len(t2) {
			c := t2[end]
			if (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || ((c == 'e' || c == 'E') && end > 0 && end+1 < len(t2) && (t2[end+1] >= '0' && t2[end+1] <= '9' || t2[end+1] == '-')) {
				end++
				continue
			}
			break
		}
		if end == 0 {
			if ok {
				t.Fatalf("%q: ok without a number", s)
			}
			return
		}
		want, err := strconv.ParseFloat(t2[:end], 64)
		if (err == nil) != ok || (ok && (n != want || unit != strings.ToLower(strings.TrimSpace(t2[end:])))) {
			t.Fatalf("%q: got %v %q %v, want %v %q %v", s, n, unit, ok, want, strings.ToLower(strings.TrimSpace(t2[end:])), err == nil)
		}
	})
}
