package browserpool

import (
	"bytes"
	"image/gif"
	"testing"
)

// FuzzGIFBounds: gifBounds never panics, and for any GIF Go decodes, the
// size it counts holds the logical screen and every frame.
func FuzzGIFBounds(f *testing.F) {
	f.Add(redGIF(40, 30, gifFrame{0, 0, 40, 30}))
	f.Add(redGIF(1, 1, gifFrame{160, 100, 40, 30}))
	f.Add(redGIF(10, 10, gifFrame{0, 0, 10, 10}, gifFrame{5, 5, 10, 10}))
	f.Add(append(redGIF(10, 10, gifFrame{0, 0, 10, 10}), "junk"...))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := gifBounds(data)
		g, gerr := gif.DecodeAll(bytes.NewReader(data))
		if gerr != nil {
			return
		}
		if err != nil {
			t.Fatalf("Go decodes it, gifBounds refuses it: %v", err)
		}
		if cfg.Width < g.Config.Width || cfg.Height < g.Config.Height {
			t.Fatalf("counted %dx%d, the screen is %dx%d", cfg.Width, cfg.Height, g.Config.Width, g.Config.Height)
		}
		for i, img := range g.Image {
			if b := img.Bounds(); cfg.Width < b.Max.X || cfg.Height < b.Max.Y {
				t.Fatalf("counted %dx%d, frame %d reaches %v", cfg.Width, cfg.Height, i, b.Max)
			}
		}
	})
}
