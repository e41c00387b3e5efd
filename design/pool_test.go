package design

import (
	"bytes"
	"testing"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// TestReleaseReuse decodes designs one after the other, releasing each
// before the next is decoded into the blocks it gave back, and checks
// that every design still encodes to what a fresh decode gives: no
// member of one design may show in another.
func TestReleaseReuse(t *testing.T) {
	designs := designtest.Own(t)
	names := designtest.Names(designs)
	want := map[string][]byte{}
	for _, name := range names {
		d, err := Decode(designs[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want[name], err = d.Encode(); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		for i := range names {
			name := names[(i*7+round)%len(names)]
			d, err := Decode(designs[name])
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := d.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want[name]) {
				t.Errorf("%s after reuse: encodes to %d bytes, want %d", name, len(got), len(want[name]))
			}
			d.Release()
			if d.Root.Kind != Absent || d.Page.Rows != nil {
				t.Fatalf("%s: a released design still reads as a design", name)
			}
			d.Release() // a second release gives nothing back twice
		}
		var none *Design
		none.Release()
	}
}

// TestReleasedBlocksHoldNothing checks that a released tree's blocks go
// back emptied (or overwritten, under the race detector): a pooled block
// must not keep the last request's document alive, or show it.
func TestReleasedBlocksHoldNothing(t *testing.T) {
	data := designtest.OwnFile(t, "starter-newsletter")
	_, blocks, err := parseDocument(string(data), data, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatal("the tree was cut from no block")
	}
	used := 0
	for _, bp := range blocks {
		used += len(*bp)
	}
	releaseBlocks(blocks)
	for _, bp := range blocks {
		if len(*bp) != 0 {
			t.Fatalf("a released block keeps its length %d", len(*bp))
		}
		for _, m := range (*bp)[:cap(*bp)] {
			if m.Key != "" && m.Key != released.Key || m.Value.Str != "" && m.Value.Str != released.Value.Str || m.Value.Members != nil {
				t.Fatalf("a released block still holds member %q (of %d used)", m.Key, used)
			}
		}
	}
}
