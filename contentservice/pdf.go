package contentservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/browserpool"
	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

// The PDF and image exports' paths, and where the PDFs are served.
const (
	PathMessagePDF   = "/v1/message/pdf"
	PathPagePDF      = "/v1/page/pdf"
	PathMessageImage = "/v1/message/image"
	PathPageImage    = "/v1/page/image"
	PathFiles        = "/v1/files/"
)

// Codes of the PDF and image exports.
const (
	CodeNotImplemented = 501  // the endpoints are turned off
	CodeBusy           = 503  // every tab rendering, the queue full
	CodeRenderTimeout  = 5040 // the render took longer than browser.timeout
)

// Bounds of an image export, in CSS pixels.
const (
	maxImageWidth  = 4096
	maxImageHeight = 16384
	// maxImagePixels bounds a shot's width × height, and so its answer:
	// Chromium writes a PNG of noise at 3 bytes a pixel (48 MiB here),
	// and the whole shot comes through DevTools in one message, which
	// Go holds about four times over. A 4096 × 16384 shot of 58 MB of
	// noise images was a 200 MB PNG.
	maxImagePixels = 16 << 20
	fullPDFWidth   = 900 // the vendor's "Full" page width
	pdfViewport    = 800
	maxStoredFiles = 1000
	// maxStoredBytes bounds the PDFs kept, in all: one render may make
	// tens of MB (images of the fetch budget, embedded uncompressed: a
	// 58 MB PDF from 200 bytes of HTML in 10 s), so the count alone let
	// 1000 of them fill tens of GB for files_ttl.
	maxStoredBytes = 2 << 30
	// renderRequestsPerImage is the HTTP requests one render may send
	// per image of fetch.max_images, every redirect counted: as many as
	// a check may. Each image following 5 redirects, 200 of them made
	// 1,200 requests.
	renderRequestsPerImage = 4
)

// paperSizes are the PDF page sizes, in inches, portrait.
var paperSizes = map[string][2]float64{
	"letter": {8.5, 11},
	"a4":     {8.27, 11.69},
	"a3":     {11.69, 16.54},
}

// canonicalSize is the page size as the answer spells it.
var canonicalSize = map[string]string{"letter": "Letter", "a4": "A4", "a3": "A3", "full": "Full"}

// renderRequest is the body of a PDF or image export.
type renderRequest struct {
	HTML            *string         `json:"html"`
	PageSize        string          `json:"page_size"`
	PageOrientation string          `json:"page_orientation"`
	Width           *int64          `json:"width"`
	Height          *int64          `json:"height"`
	Size            json.RawMessage `json:"size"`
	FileType        string          `json:"file_type"`
}

// admitRender admits and decodes a PDF or image request; ok false after
// answering the failure.
func (s *service) admitRender(w http.ResponseWriter, r *http.Request) (string, *renderRequest, func(), bool) {
	if s.browser == nil {
		w.Header().Set("X-Request-Id", requestID(r))
		writeError(w, http.StatusNotImplemented, CodeNotImplemented, "Not implemented",
			"PDF and image exports are turned off on this content service")
		return "", nil, func() {}, false
	}
	id, body, release, ok := s.admitJSON(w, r)
	if !ok {
		return id, nil, release, false
	}
	var req renderRequest
	if err := json.Unmarshal(body, &req); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			details := "the body must be a JSON object with html"
			if typeErr.Field != "" {
				details = fmt.Sprintf("%s must not be %s", typeErr.Field, typeErr.Value)
			}
			writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid request", details)
		} else {
			writeError(w, http.StatusBadRequest, CodeNotJSON, "Body is not JSON", "the body must be a JSON object")
		}
		return id, nil, release, false
	}
	if req.HTML == nil || strings.TrimSpace(*req.HTML) == "" {
		writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid request", "html is required (the document to render)")
		return id, nil, release, false
	}
	return id, &req, release, true
}

// servePDF answers POST /v1/{message,page}/pdf: the HTML printed to a PDF,
// kept for browser.files_ttl, and a link to it.
func (s *service) servePDF(w http.ResponseWriter, r *http.Request) {
	id, req, release, ok := s.admitRender(w, r)
	defer release()
	if !ok {
		return
	}
	size := strings.ToLower(strings.TrimSpace(req.PageSize))
	orient := strings.ToLower(strings.TrimSpace(req.PageOrientation))
	if _, known := canonicalSize[size]; !known {
		writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid request", "page_size must be Letter, A4, A3 or Full")
		return
	}
	if orient != "portrait" && orient != "landscape" {
		writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid request", "page_orientation must be portrait or landscape")
		return
	}
	opt := browserpool.PDFOptions{Landscape: orient == "landscape", Width: pdfViewport}
	if size == "full" {
		opt.Full, opt.Width = true, fullPDFWidth
	} else {
		paper := paperSizes[size]
		opt.WidthIn, opt.HeightIn = paper[0], paper[1]
	}
	// The PDF goes from the browser to its file as it comes.
	var renderErr error
	name, err := s.files.put(func(f io.Writer) error {
		renderErr = s.browser.PDF(s.renderContext(r), *req.HTML, opt, f)
		return renderErr
	})
	if renderErr != nil {
		s.renderError(w, r, id, renderErr)
		return
	}
	if err != nil {
		s.logger.Error("storing a PDF failed", zap.String("request_id", id), zap.Error(err))
		writeError(w, http.StatusInternalServerError, CodeInternal, "Internal error", "request id "+id)
		return
	}
	// The link expires: no cache may keep this answer.
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"body": map[string]string{
		"url":              s.fileURL(r, name),
		"filename":         name,
		"content_type":     "application/pdf",
		"page_size":        canonicalSize[size],
		"page_orientation": orient,
	}})
}

// serveImage answers POST /v1/{message,page}/image with the image itself.
func (s *service) serveImage(w http.ResponseWriter, r *http.Request) {
	id, req, release, ok := s.admitRender(w, r)
	defer release()
	if !ok {
		return
	}
	var opt browserpool.ImageOptions
	switch strings.ToLower(strings.TrimSpace(req.FileType)) {
	case "png":
	case "jpg", "jpeg":
		opt.JPEG = true
	default:
		writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid request", "file_type must be png or jpg")
		return
	}
	switch {
	case req.Width != nil:
		opt.Width = *req.Width
		if req.Height != nil {
			opt.Height = *req.Height
			if opt.Height < 1 || opt.Height > maxImageHeight {
				writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid request",
					fmt.Sprintf("height must be 1 to %d pixels", maxImageHeight))
				return
			}
		}
	case len(req.Size) > 0:
		// size: the width, as a number or a string; the height follows
		// the content.
		text := strings.Trim(string(req.Size), `" `)
		n, err := strconv.ParseInt(strings.TrimSuffix(text, "px"), 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid request", "size must be a width in pixels")
			return
		}
		opt.Width = n
	default:
		writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid request", "width (and height) or size is required")
		return
	}
	if opt.Width < 1 || opt.Width > maxImageWidth {
		writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid request",
			fmt.Sprintf("width must be 1 to %d pixels", maxImageWidth))
		return
	}
	if opt.Width*opt.Height > maxImagePixels {
		writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid request",
			fmt.Sprintf("width × height must be at most %d pixels", maxImagePixels))
		return
	}
	// A shot as tall as the content is cut where it reaches the bound.
	opt.MaxHeight = min(maxImageHeight, maxImagePixels/opt.Width)
	data, err := s.browser.Image(s.renderContext(r), *req.HTML, opt)
	if err != nil {
		s.renderError(w, r, id, err)
		return
	}
	ctype := "image/png"
	if opt.JPEG {
		ctype = "image/jpeg"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// renderContext is the context of r's render: the request's, with the
// HTTP requests its images may send (safefetch.WithBudget).
func (s *service) renderContext(r *http.Request) context.Context {
	return safefetch.WithBudget(r.Context(), int64(s.fetch.maxImages)*renderRequestsPerImage)
}

// renderError answers a failed render: a document too long, a PDF too
// large, or a page whose renderer crashed as one past the memory bound
// does as 413 (logged at DEBUG, as refusals are); a full queue or an
// unloaded config as 503, a timeout as 504 and anything else (another
// crash too) as 500, each logged at ERROR (the error policy's level for
// 5xx), a crash with how the process ended.
func (s *service) renderError(w http.ResponseWriter, r *http.Request, id string, err error) {
	if errors.Is(err, browserpool.ErrBusy) {
		// By then every render running now has ended.
		secs := int(math.Ceil(s.browserTimeout.Seconds()))
		s.logger.Error("rendering refused: the browser is busy",
			zap.String("request_id", id), zap.String("path", r.URL.Path), zap.Error(err))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeError(w, http.StatusServiceUnavailable, CodeBusy, "Service busy",
			fmt.Sprintf("every browser tab is rendering and the queue is full; retry after %d s", secs))
		return
	}
	if errors.Is(err, browserpool.ErrClosed) {
		// A request the config being unloaded still took, after its last
		// render stopped the browser: the loaded config answers a retry.
		s.logger.Error("rendering refused: the configuration is being unloaded",
			zap.String("request_id", id), zap.String("path", r.URL.Path))
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, CodeBusy, "Service reloading",
			"the service's configuration was reloaded during this request; retry")
		return
	}
	if errors.Is(err, browserpool.ErrTooManyPages) {
		s.logRefusal(w, r, "rendering refused", fmt.Sprintf("longer than %d pages", browserpool.MaxPDFPages))
		writeError(w, http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "Document too long",
			fmt.Sprintf("the document is longer than %d pages of this page_size and page_orientation", browserpool.MaxPDFPages))
		return
	}
	if errors.Is(err, browserpool.ErrTooLarge) {
		s.logRefusal(w, r, "rendering refused", fmt.Sprintf("PDF over %d MiB", browserpool.DefaultMaxPDFBytes>>20))
		writeError(w, http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "Document too large",
			fmt.Sprintf("the PDF is larger than %d MiB", browserpool.DefaultMaxPDFBytes>>20))
		return
	}
	var crash *browserpool.PageCrash
	if errors.As(err, &crash) && crash.OutOfMemory() && browserpool.PageMemoryBounded {
		// Chromium ends a renderer that fails to allocate this way (a
		// failed internal check too, rarely): most likely the memory
		// bound. Any other crash is the service's failure, below.
		s.logRefusal(w, r, "rendering refused", "the page's renderer crashed as one past the memory bound does")
		writeError(w, http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "Document too large to render",
			fmt.Sprintf("the render was stopped by a crash of the kind the memory bound causes: most likely the document needs more than the %d MiB of memory a render may use", browserpool.DefaultMaxPageMemory>>20))
		return
	}
	if errors.Is(err, browserpool.ErrTimeout) {
		s.logger.Error("rendering timed out",
			zap.String("request_id", id), zap.String("path", r.URL.Path), zap.Error(err))
		writeError(w, http.StatusGatewayTimeout, CodeRenderTimeout, "Rendering timed out",
			"the render took longer than this service allows")
		return
	}
	fields := []zap.Field{zap.String("request_id", id), zap.String("path", r.URL.Path), zap.Error(err)}
	if crash != nil {
		fields = append(fields, zap.String("crash_status", crash.Status), zap.Int64("crash_code", crash.Code))
	}
	s.logger.Error("rendering in the browser failed", fields...)
	writeError(w, http.StatusInternalServerError, CodeInternal, "Internal error", "request id "+id)
}

// fileURL is the absolute URL of a stored file: under browser.public_url,
// else where the request came in (with the prefix a handle_path took).
func (s *service) fileURL(r *http.Request, name string) string {
	if s.publicURL != "" {
		return s.publicURL + PathFiles + name
	}
	prefix := ""
	if orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok {
		prefix = strings.TrimSuffix(orig.URL.Path, r.URL.Path)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + prefix + PathFiles + name
}

// noImages is the fetcher of a service whose fetch is off.
type noImages struct{}

func (noImages) Fetch(context.Context, string) ([]byte, string, error) {
	return nil, "", errors.New("fetching is off")
}
