#!/usr/bin/env bash
# CPU per request of the forwarders, before and after a change, in one run:
#
#   bash bench/forwardcpu.sh [git ref]     # the ref (default HEAD) against the working tree
#
# Builds Caddy at the ref and from the working tree, starts both (with
# bench/caddy/forward.Caddyfile) in front of one stand-in upstream, and
# in ROUNDS (default 3) rounds, old then new, measures with bench/load -pid
# the Caddy process's CPU time (user + system, /proc/PID/stat) per request:
#   forward: design_bridge (cache off) and reverse_proxy, a 40 KB design,
#            every body different, c=1,16,64, N (default 3000) requests each;
#   hit:     design_bridge with its cache answering a kept answer, against
#            Caddy's respond answering the same bytes, the same body every
#            time, c=16;
#   large:   10 MiB bodies, design_bridge and reverse_proxy, c=1 and 8,
#            LARGE_N (default 40) requests each.
# The upstream answers ANSWER_BYTES (default 26000) of HTML. Loopback only;
# every process started here is stopped on exit. Tables go to stdout and
# JSON to $OUT (default a temporary folder, printed).
set -euo pipefail
REF=${1:-HEAD}
NAME=forwardcpu
. "$(dirname "$0")/refpair.sh"
(cd "$ROOT" && go build -o "$TMP/bin/upstream" ./bench/upstream)

DESIGN=${DESIGN:-}
BODY=(-body-bytes 40960)
if [ -n "$DESIGN" ]; then BODY=(-body "$DESIGN"); elif [ -n "${DESIGN_CORPUS:-}" ]; then
	BODY=(-body "$DESIGN_CORPUS/beefree-sdk-csapi-simple-integration__initial-template.json")
fi
N=${N:-3000}
LARGE_N=${LARGE_N:-40}
ROUNDS=${ROUNDS:-3}
export BENCH_TOKEN=bench-token UPSTREAM_PORT=9601

"$TMP/bin/upstream" -addr "127.0.0.1:$UPSTREAM_PORT" -token "$BENCH_TOKEN" -html-bytes "${ANSWER_BYTES:-26000}" >"$OUT/upstream.log" 2>&1 &
PIDS+=($!)
wait_port "$UPSTREAM_PORT"
BENCH_ANSWER=$(curl -s -X POST -H "Authorization: Bearer $BENCH_TOKEN" -H 'Content-Type: application/json' \
	--data '{}' "http://127.0.0.1:$UPSTREAM_PORT/v1/message/html")
export BENCH_ANSWER

# start_caddy NAME BASE: ports BASE+2 (bridge), +3 (proxy), +6 (cache), +7 (respond).
declare -A CADDY_PID PORT
start_caddy() {
	local name=$1 base=$2
	mkdir -p "$TMP/xdg-$name"
	env XDG_CONFIG_HOME="$TMP/xdg-$name" XDG_DATA_HOME="$TMP/xdg-$name" HOME="$TMP/xdg-$name" \
		BENCH_ADMIN_PORT=$((2900 + base % 100)) BENCH_HTTP_PORT=$((base + 80)) BENCH_HTTPS_PORT=$((base + 81)) \
		BRIDGE_PORT=$((base + 2)) PROXY_PORT=$((base + 3)) CACHE_PORT=$((base + 6)) RESPOND_PORT=$((base + 7)) \
		"$TMP/bin/caddy-$name" run --config "$ROOT/bench/caddy/forward.Caddyfile" --adapter caddyfile >"$OUT/caddy-$name.log" 2>&1 &
	PIDS+=($!)
	CADDY_PID[$name]=$!
	PORT[$name]=$base
	for p in 2 3 6 7; do wait_port $((base + p)); done
}
start_caddy old 9600
start_caddy new 9610

url() { echo "http://127.0.0.1:$1/v1/message/html"; }
for round in $(seq 1 "$ROUNDS"); do
	for name in old new; do
		b=${PORT[$name]}
		pid=${CADDY_PID[$name]}
		"$TMP/bin/load" -title "forward, $name, round $round" -pid "$pid" "${BODY[@]}" \
			-target "bridge=$(url $((b + 2)))" -target "proxy=$(url $((b + 3)))" \
			-c 1,16,64 -n "$N" -d 60s -warmup 300ms -json "$OUT/forward-$name-$round.json"
		"$TMP/bin/load" -title "cache hit vs respond, $name, round $round" -pid "$pid" "${BODY[@]}" -same-body \
			-target "hit=$(url $((b + 6)))" -target "respond=$(url $((b + 7)))" \
			-c 16 -n "$N" -d 60s -warmup 300ms -json "$OUT/hit-$name-$round.json"
		"$TMP/bin/load" -title "10 MiB bodies, $name, round $round" -pid "$pid" -body-bytes $((10 << 20)) \
			-target "bridge=$(url $((b + 2)))" -target "proxy=$(url $((b + 3)))" \
			-c 1,8 -n "$LARGE_N" -d 60s -warmup 0 -json "$OUT/large-$name-$round.json"
	done
done
echo "JSON in $OUT"
