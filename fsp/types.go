package fsp

import (
	"bytes"
	"fmt"
	"image"
	_ "image/gif" // decoders for the raster check and thumbnails
	_ "image/jpeg"
	_ "image/png"
	"mime"
	"net/http"
	"path"
	"sort"
	"strings"
)

// fileType is what fsp stores under one file name extension: the one media
// type the content must sniff as (http.DetectContentType), and the
// Content-Type the file is listed and stored with.
type fileType struct {
	sniffed     string
	contentType string
}

// fileTypes is every extension an upload's name may have. A name whose
// extension is not here is refused, and the content must sniff as the
// extension's type: the name (which decides how a web server serves the
// file) and the bytes (which decide what a browser can make of them) always
// agree, so nothing stored can become a page on the site's origin.
var fileTypes = map[string]fileType{
	".png":  {"image/png", "image/png"},
	".jpg":  {"image/jpeg", "image/jpeg"},
	".jpeg": {"image/jpeg", "image/jpeg"},
	".gif":  {"image/gif", "image/gif"},
	".webp": {"image/webp", "image/webp"},
	".bmp":  {"image/bmp", "image/bmp"},
	".ico":  {"image/x-icon", "image/x-icon"},
	".pdf":  {"application/pdf", "application/pdf"},
	".txt":  {"text/plain", "text/plain"},
	".csv":  {"text/plain", "text/csv"},
	".zip":  {"application/zip", "application/zip"},
	".docx": {"application/zip", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
	".xlsx": {"application/zip", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
	".pptx": {"application/zip", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
	".odt":  {"application/zip", "application/vnd.oasis.opendocument.text"},
	".ods":  {"application/zip", "application/vnd.oasis.opendocument.spreadsheet"},
	".odp":  {"application/zip", "application/vnd.oasis.opendocument.presentation"},
	".epub": {"application/zip", "application/epub+zip"},
	".mp3":  {"audio/mpeg", "audio/mpeg"},
	".wav":  {"audio/wave", "audio/wav"},
	".ogg":  {"application/ogg", "audio/ogg"},
	".mp4":  {"video/mp4", "video/mp4"},
	".m4a":  {"video/mp4", "audio/mp4"},
	".webm": {"video/webm", "video/webm"},
	".avi":  {"video/avi", "video/x-msvideo"},
}

// defaultAllowedTypes are the sniffed types an upload may have unless the
// Caddyfile names others: the file manager's groups image, text, office,
// zip, pdf, audio and video, as far as a content check can tell them.
func defaultAllowedTypes() []string {
	return []string{
		"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/x-icon",
		"application/pdf", "application/zip", "text/plain",
		"audio/mpeg", "audio/wave", "application/ogg", "video/mp4", "video/webm", "video/avi",
	}
}

// activeType reports whether a browser may run script in a file of media
// type mt opened as a page: HTML, XHTML, SVG, any XML (XSLT turns it into
// HTML), JavaScript, Flash, multipart documents. These are never stored,
// whatever the name and whatever allow_types says.
func activeType(mt string) bool {
	switch mt {
	case "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml",
		"text/xsl", "text/javascript", "application/javascript", "application/x-javascript",
		"application/ecmascript", "text/ecmascript", "application/x-shockwave-flash",
		"multipart/x-mixed-replace", "multipart/related", "message/rfc822", "application/x-mimearchive":
		return true
	}
	return strings.HasSuffix(mt, "+xml")
}

// inlineType reports whether a stored file of Content-Type ct may be shown
// in the browser (images, PDF, plain text); anything else is served as an
// attachment, so it is downloaded, never rendered on the file host.
func inlineType(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return (strings.HasPrefix(mt, "image/") && !activeType(mt)) || mt == "application/pdf" || mt == "text/plain"
}

// checkAllowType is the load-time check of one allow_types entry.
func checkAllowType(t string) error {
	mt, params, err := mime.ParseMediaType(t)
	if err != nil || mt != t || len(params) > 0 || strings.Count(t, "/") != 1 || strings.HasPrefix(t, "/") || strings.HasSuffix(t, "/") {
		return fmt.Errorf("%q is not a media type: write type/subtype in lower case, such as image/png", t)
	}
	if activeType(t) {
		return fmt.Errorf("%s can carry script that would run on the site's origin; it is never stored", t)
	}
	for _, ft := range fileTypes {
		if ft.sniffed == t {
			return nil
		}
	}
	return fmt.Errorf("%s: no file name extension is known for it; the types that can be allowed are %s", t, strings.Join(storableTypes(), " "))
}

// storableTypes lists the sniffed types of fileTypes, sorted.
func storableTypes() []string {
	seen := map[string]bool{}
	var out []string
	for _, ft := range fileTypes {
		if !seen[ft.sniffed] {
			seen[ft.sniffed] = true
			out = append(out, ft.sniffed)
		}
	}
	sort.Strings(out)
	return out
}

// typeForName is the Content-Type a stored file is listed with.
func typeForName(name string) string {
	if ft, ok := fileTypes[strings.ToLower(path.Ext(name))]; ok {
		return ft.contentType
	}
	return "application/octet-stream"
}

func allowed(mt string, allow []string) bool {
	for _, t := range allow {
		if t == mt {
			return true
		}
	}
	return false
}

// checkName refuses, before anything is read, a name whose extension fsp
// does not store or whose type is not allowed.
func checkName(name string, allow []string) error {
	ext := strings.ToLower(path.Ext(name))
	ft, ok := fileTypes[ext]
	switch {
	case ok && allowed(ft.sniffed, allow):
		return nil
	case ok:
		return uploadErr("%s files are not allowed here", ext)
	case ext == "" || ext == ".":
		return uploadErr("the name needs an extension such as .png or .pdf")
	}
	if t := mime.TypeByExtension(ext); t != "" {
		if mt, _, _ := mime.ParseMediaType(t); activeType(mt) {
			return uploadErr("%s files can run script in a browser and are never stored", ext)
		}
	}
	return uploadErr("%s files are not stored", ext)
}

// checkContent sniffs data and checks it against the name's extension and
// the allowed types. It returns the sniffed media type.
func checkContent(name string, data []byte, allow []string) (string, error) {
	if err := checkName(name, allow); err != nil {
		return "", err
	}
	sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(data))
	if activeType(sniffed) {
		return "", uploadErr("the content is %s, which can run script in a browser", sniffed)
	}
	if claimed := fileTypes[strings.ToLower(path.Ext(name))].sniffed; claimed != sniffed {
		return "", uploadErr("the content is %s, not the %s its name claims", sniffed, claimed)
	}
	if isRaster(sniffed) {
		// The signature alone is not an image: the header must decode.
		if _, _, err := image.DecodeConfig(bytes.NewReader(data)); err != nil {
			return "", uploadErr("the %s image is damaged", sniffed)
		}
	}
	return sniffed, nil
}

func isRaster(mediaType string) bool {
	return mediaType == "image/png" || mediaType == "image/jpeg" || mediaType == "image/gif"
}
