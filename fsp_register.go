package designbridge

// The fsp handler lives in its own package; importing it here registers it
// with everything else, so `xcaddy build --with` this module brings it in.
// fsp imports only internal/fsperr, never this package: no cycle.
import _ "github.com/designbridge/caddy-designbridge/fsp"
