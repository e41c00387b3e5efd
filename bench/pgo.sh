#!/usr/bin/env bash
# Regenerates cmd/caddy/default.pgo, the CPU profile Go's profile-guided
# optimisation builds the example's Caddy with (go build picks up a main
# package's default.pgo by itself; bench/run.sh passes it to mjmlcompare
# too). The profile is content_service's per-request work, decode and
# render, over every corpus template on one core:
#
#   bash bench/pgo.sh
#
# Run it after changing design/ or render/; a stale profile still builds,
# it just guides less.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# Built without a profile, so the profile describes unguided code.
go test -c -pgo=off -o "$TMP/bench.test" ./bench/
(cd bench && "$TMP/bench.test" -test.run '^$' -test.bench 'Corpus/.*/DecodeRender$' -test.cpu 1 \
	-test.benchtime 300ms -test.cpuprofile "$TMP/cpu.pprof" >/dev/null)
cp "$TMP/cpu.pprof" cmd/caddy/default.pgo
echo "wrote cmd/caddy/default.pgo ($(stat -c %s cmd/caddy/default.pgo) bytes)"
