// Package contentservice is the Caddy module http.handlers.content_service:
// a local content service (LoginV2 and the export endpoints) that renders
// design JSON with the render package.
package contentservice
