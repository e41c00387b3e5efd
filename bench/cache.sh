#!/usr/bin/env bash
# E. design_bridge's export cache and shared calls, in one command:
#
#   bash bench/cache.sh
#
# One 40 KB design (the corpus's csapi template when DESIGN_CORPUS names
# the corpus, else a synthetic design of 40 KB) exported again and again
# through design_bridge in front of content_service, at 16 closed-loop
# workers, with the cache off and on; then 100 identical exports at once,
# with the cache off (so every answer comes from a shared call or an
# upstream call of its own). Upstream calls are read from Caddy's
# /metrics (caddy_design_bridge_exports_total). Loopback only, bounded in
# time; every process started here is stopped on exit. Every request
# carries the same body (-same-body): sharing is what is measured here.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=$(mktemp -d /tmp/designbridge-cache-bench.XXXXXX)
CADDY_PID=
cleanup() {
	[ -n "$CADDY_PID" ] && kill "$CADDY_PID" 2>/dev/null && wait "$CADDY_PID" 2>/dev/null
	rm -rf "$BIN"
}
trap cleanup EXIT

export BENCH_ADMIN_PORT=2906 CONTENT_PORT=9610 BRIDGE_PORT=9620
DURATION=${DURATION:-5s}
BODY=(-same-body -body-bytes 40960)
if [ -n "${DESIGN_CORPUS:-}" ]; then
	BODY=(-same-body -body "$DESIGN_CORPUS/beefree-sdk-csapi-simple-integration__initial-template.json")
fi

go build -o "$BIN/caddy" ./cmd/caddy
go build -o "$BIN/load" ./bench/load

exports() { # upstream calls so far
	curl -s "localhost:$BENCH_ADMIN_PORT/metrics" |
		awk '/^caddy_design_bridge_exports_total/ { n += $2 } END { print n + 0 }'
}
result() { # cache result counter
	curl -s "localhost:$BENCH_ADMIN_PORT/metrics" |
		awk -v r="$1" '$0 ~ "^caddy_design_bridge_cache_requests_total\\{result=\"" r "\"\\}" { n += $2 } END { print n + 0 }'
}
start() {
	CACHE_LINE=$1 "$BIN/caddy" run --config bench/caddy/cache.Caddyfile --adapter caddyfile >"$BIN/caddy.log" 2>&1 &
	CADDY_PID=$!
	for _ in $(seq 50); do
		curl -s -o /dev/null "localhost:$BENCH_ADMIN_PORT/config/" && return
		sleep 0.1
	done
	echo "caddy did not start"; cat "$BIN/caddy.log"; exit 1
}
stop() {
	kill "$CADDY_PID"; wait "$CADDY_PID" 2>/dev/null || true; CADDY_PID=
}
cpu_ms() { # CPU time of the Caddy process so far, in ms
	awk '{ print ($14 + $15) * 1000 / '"$(getconf CLK_TCK)"' }' "/proc/$CADDY_PID/stat"
}

target="bridge=http://127.0.0.1:$BRIDGE_PORT/v1/message/html"
for mode in off on; do
	line=""; [ "$mode" = on ] && line="cache"
	start "$line"
	"$BIN/load" -target "$target" "${BODY[@]}" -c 1 -d 200ms -warmup 0 >/dev/null
	before=$(exports); cpu0=$(cpu_ms)
	echo "### c=16, cache $mode"
	"$BIN/load" -target "$target" "${BODY[@]}" -c 16 -d "$DURATION" -warmup 0 -json "$BIN/c16-$mode.json" | tee "$BIN/c16-$mode.txt"
	after=$(exports); cpu1=$(cpu_ms)
	total=$(grep -o '"requests": *[0-9]*' "$BIN/c16-$mode.json" | head -1 | grep -o '[0-9]*$')
	calls=$((after - before))
	echo "requests: $total, upstream calls: $calls ($((calls * 1000 / total)) per 1,000 exports), hits: $(result hit), coalesced: $(result coalesced), Caddy CPU: $(awk -v a="$cpu0" -v b="$cpu1" -v n="$total" 'BEGIN { printf "%.3f", (b - a) / n }') ms per request"
	stop
done

echo "### 100 identical exports at once, cache off"
start ""
before=$(exports)
"$BIN/load" -target "$target" "${BODY[@]}" -c 100 -n 100 -d 10s -warmup 0 | tee "$BIN/burst.txt"
echo "upstream calls: $(( $(exports) - before )), coalesced: $(result coalesced)"
stop
