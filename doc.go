// Package designbridge is a set of Caddy v2 HTTP handler modules that let a
// site served by Caddy host a drag-and-drop email design editor without a
// server of its own: design_bridge (forwards exports and LoginV2 with
// server-side secrets), fsp_error (file-system-provider error bodies), and,
// through their own packages, fsp (the file-system provider, on a local
// folder or S3) and content_service (a local content service that renders
// design JSON into email HTML).
package designbridge

import (
	// Registers http.handlers.content_service, so that building Caddy with
	// this one module path brings every handler (fsp: fsp_register.go).
	_ "github.com/designbridge/caddy-designbridge/contentservice"
)
