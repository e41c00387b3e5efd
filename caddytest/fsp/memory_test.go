package fsp

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/designbridge/caddy-designbridge/testutil/imagebomb"
)

// procStatus reads a "Vm…: N kB" line of /proc/self/status, in bytes.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: peak memory cannot be read here")
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// TestProviderBoundsImageMemory uploads image bombs (the 310 KB interlaced
// 16-bit PNG of 6320×6320 that decodes to about 640 MB) and images just
// within the thumbnail budget, all at once, and reads the process's peak
// memory (Caddy runs in this process): it must stay within the bound
// docs/fsp.md states, max_uploads × (2 × max_size + max_image_memory),
// doubled for the Go collector's headroom (GOGC=100).
func TestProviderBoundsImageMemory(t *testing.T) {
	const (
		maxUploads     = 4
		maxSize        = 1 << 20
		maxImageMemory = 64 << 20
	)
	bomb := imagebomb.PNGOfZeros(6320, 6320, 16, 6, true)
	fits := imagebomb.PNGOfZeros(2000, 2000, 8, 6, false)
	anonymousSite(t, "local "+t.TempDir(), fmt.Sprintf("max_uploads %d", maxUploads), "max_size 1MiB")

	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("the peak memory cannot be reset here: %v", err)
	}
	base := procStatus(t, "VmHWM")

	var wg sync.WaitGroup
	const bombs, fitting = 8, 4
	results := make([]response, bombs+fitting)
	for i := range bombs + fitting {
		data, name := bomb, fmt.Sprintf("/bomb%d.png", i)
		if i >= bombs {
			data, name = fits, fmt.Sprintf("/fits%d.png", i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := direct(name, string(data))
			c.auth = "-"
			results[i] = send(t, privatePort, c)
		}()
	}
	wg.Wait()
	peak := procStatus(t, "VmHWM") - base

	for i, res := range results {
		var ok struct {
			Data dataJSON `json:"data"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil {
			t.Errorf("upload %d: %d %s", i, res.Status, res.Body)
			continue
		}
		if hasThumb := ok.Data.Meta.Thumbnail != ""; hasThumb != (i >= bombs) {
			t.Errorf("%s: thumbnail %v, want %v", ok.Data.Meta.Path, hasThumb, i >= bombs)
		}
	}
	bound := int64(maxUploads) * (2*maxSize + maxImageMemory)
	t.Logf("peak memory grew by %d MiB for %d bombs and %d images within budget; the bound is %d MiB (×2 for the collector)", peak>>20, bombs, fitting, bound>>20)
	if peak > 2*bound {
		t.Errorf("peak memory grew by %d MiB, over twice the stated bound of %d MiB", peak>>20, bound>>20)
	}
}

// TestProviderJPEGScanBomb uploads JPEGs of many scans, each a pass of the
// decoder over the whole image in a dozen bytes: they are stored, without
// a thumbnail and without being decoded; a progressive JPEG of as many
// scans as encoders write gets its thumbnail.
func TestProviderJPEGScanBomb(t *testing.T) {
	anonymousSite(t, "local "+t.TempDir(), "max_size 1MiB")
	for _, c := range []struct {
		name  string
		data  []byte
		thumb bool
	}{
		{"/progressive.jpg", imagebomb.ProgressiveJPEG(1200, 800, 9), true},
		{"/scans.jpg", imagebomb.ProgressiveJPEG(2000, 2000, 1000), false},
	} {
		call := direct(c.name, string(c.data))
		call.auth = "-"
		res := send(t, privatePort, call)
		var ok struct {
			Data dataJSON `json:"data"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil {
			t.Errorf("%s: %d %s", c.name, res.Status, res.Body)
			continue
		}
		if got := ok.Data.Meta.Thumbnail != ""; got != c.thumb {
			t.Errorf("%s: thumbnail %v, want %v", c.name, got, c.thumb)
		}
	}
}
