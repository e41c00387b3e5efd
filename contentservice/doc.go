// Package contentservice is the Caddy module http.handlers.content_service:
// a local content service: LoginV2, the export endpoints (design JSON to
// HTML and plain text with the render package), the Check API (the
// designcheck package), and PDF and image exports (headless Chromium,
// internal/browserpool).
package contentservice
