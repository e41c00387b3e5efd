// Command caddy is Caddy with its standard modules plus the design bridge
// modules (design_bridge, fsp_error, fsp, content_service). It is a development
// convenience: integrators usually build with xcaddy instead.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/designbridge/caddy-designbridge"
)

func main() {
	caddycmd.Main()
}
