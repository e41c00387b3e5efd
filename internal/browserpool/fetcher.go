package browserpool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

// HTTPFetcher fetches images with Client (give it one from safefetch),
// at most MaxSize bytes each, and only what is served as an image. With
// Slots, each image waits for one of them until its context ends.
type HTTPFetcher struct {
	Client  *http.Client
	MaxSize int64
	Slots   *safefetch.Slots
}

// Fetch implements Fetcher.
func (f *HTTPFetcher) Fetch(ctx context.Context, url string) ([]byte, string, error) {
	release, err := f.Slots.Acquire(ctx)
	if err != nil {
		return nil, "", err
	}
	defer release()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, "", err
	}
	res, err := f.Client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("status %d", res.StatusCode)
	}
	ctype := res.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ctype); err != nil || len(mt) < 6 || mt[:6] != "image/" {
		// Only images: a page shows nothing else from the network.
		return nil, "", errors.New("not an image")
	}
	if res.ContentLength > f.MaxSize {
		return nil, "", errors.New("image too large")
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, f.MaxSize+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(body)) > f.MaxSize {
		return nil, "", errors.New("image too large")
	}
	return body, ctype, nil
}
