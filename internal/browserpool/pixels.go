package browserpool

import (
	"bytes"
	"errors"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"

	"golang.org/x/image/webp"
)

// errUnmeasured is an image whose size the pool cannot read.
var errUnmeasured = errors.New("not a PNG, JPEG, GIF or WebP")

// imagePixels is the width × height an image's header states. Chromium
// decodes an image whole, 4 bytes a pixel, however small its file (a
// 428 KB PNG of 20000×20000 took 1.6 GB), so the pool hands it only images
// it has measured: PNG, JPEG, GIF and WebP. An SVG could hold any of them
// as a data: URL, and others (AVIF) need decoders Go does not have.
func imagePixels(data []byte) (int64, error) {
	decode := map[string]func([]byte) (image.Config, error){
		"image/png":  func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) },
		"image/jpeg": func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) },
		"image/gif":  func(b []byte) (image.Config, error) { return gif.DecodeConfig(bytes.NewReader(b)) },
		"image/webp": func(b []byte) (image.Config, error) { return webp.DecodeConfig(bytes.NewReader(b)) },
	}[http.DetectContentType(data)]
	if decode == nil {
		return 0, errUnmeasured
	}
	cfg, err := decode(data)
	if err != nil {
		return 0, err
	}
	return int64(cfg.Width) * int64(cfg.Height), nil
}
