#!/usr/bin/env bash
# content_service's CPU per render, before and after a change, in one run:
#
#   bash bench/contentcpu.sh [git ref]     # the ref (default HEAD) against the working tree
#
# Builds Caddy at the ref and from the working tree, starts both with
# bench/caddy/content.Caddyfile, and in ROUNDS (default 3) rounds, old then
# new, posts the 40 KB design (DESIGN, by default the corpus's csapi
# initial-template; every body different) with bench/load -pid at c=1 and
# 16, N (default 3000) requests each, reading the Caddy process's CPU time
# (user + system) per render: renders per second on a given CPU are its
# inverse, and it holds up on a busy machine where throughput does not.
# Loopback only; every process started here is stopped on exit.
set -euo pipefail
REF=${1:-HEAD}
NAME=contentcpu
. "$(dirname "$0")/refpair.sh"

DESIGN=${DESIGN:-${DESIGN_CORPUS:?"set DESIGN_CORPUS (or DESIGN)"}/beefree-sdk-csapi-simple-integration__initial-template.json}
N=${N:-3000}
ROUNDS=${ROUNDS:-3}
export BENCH_TOKEN=bench-token

# start_caddy NAME PORT
declare -A CADDY_PID PORT
start_caddy() {
	local name=$1 port=$2
	mkdir -p "$TMP/xdg-$name"
	env XDG_CONFIG_HOME="$TMP/xdg-$name" XDG_DATA_HOME="$TMP/xdg-$name" HOME="$TMP/xdg-$name" \
		BENCH_ADMIN_PORT=$((2900 + port % 100)) BENCH_HTTP_PORT=$((port + 80)) BENCH_HTTPS_PORT=$((port + 81)) \
		CONTENT_PORT=$port "$TMP/bin/caddy-$name" run --config "$ROOT/bench/caddy/content.Caddyfile" --adapter caddyfile \
		>"$OUT/caddy-$name.log" 2>&1 &
	PIDS+=($!)
	CADDY_PID[$name]=$!
	PORT[$name]=$port
	wait_port "$port"
}
start_caddy old 9620
start_caddy new 9630

for round in $(seq 1 "$ROUNDS"); do
	for name in old new; do
		"$TMP/bin/load" -title "content_service, $name, round $round" -pid "${CADDY_PID[$name]}" -body "$DESIGN" \
			-target "$name=http://127.0.0.1:${PORT[$name]}/v1/message/html;Authorization=Bearer $BENCH_TOKEN" \
			-c 1,16 -n "$N" -d 60s -warmup 300ms -json "$OUT/content-$name-$round.json"
	done
done
echo "JSON in $OUT"
