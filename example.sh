#!/usr/bin/env bash
# Runs the example offline: Caddy with this plugin, Caddyfile.example and
# the settings of .env (or .env.example when there is no .env).
set -euo pipefail
cd "$(dirname "$0")"

env_file=.env
[ -f "$env_file" ] || env_file=.env.example

# The same value Caddy will see: the environment wins over the file, as
# with --envfile.
port=${PORT:-$(sed -n 's/^PORT=//p' "$env_file" | tail -n 1)}
port=${port:-3001}

# PDF and image exports need Chromium at content_service's default path;
# without it the example still runs, and those two endpoints answer 501.
if [ -z "${EXAMPLE_BROWSER:-}" ] && [ ! -x /usr/bin/chromium ]; then
	echo "no /usr/bin/chromium: PDF and image downloads are off (apt-get install -y chromium turns them on)"
	export EXAMPLE_BROWSER=off
fi

mkdir -p tmp
go build -o tmp/caddy ./cmd/caddy
echo "design bridge example: open http://localhost:${port}/ (settings from ${env_file}; Ctrl-C stops)"
exec tmp/caddy run --config Caddyfile.example --envfile "$env_file"
