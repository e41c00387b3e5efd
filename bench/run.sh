#!/usr/bin/env bash
# The benchmarks in one command, from the repository root or anywhere:
#
#   bash bench/run.sh            # full run, about 12 minutes on an idle 2-core machine
#   QUICK=1 bash bench/run.sh    # smoke run, about 3 minutes
#
# Builds Caddy (with our modules), the stand-in upstream, the load generator
# and the MJML comparison; installs what is missing (wrk from Debian, the
# Node packages with `npm ci`); then runs
#   A. design_bridge forwarding vs reverse_proxy vs Express+axios, and
#      Caddy's memory while forwarding 10 MiB bodies,
#   C. render.HTML vs MJML (mjml and mrml) on every corpus design,
#   D. content_service renders per second under wrk,
#   B. the renderer's Go benchmarks per corpus template beside
#      json.Unmarshal (go test -bench, one core),
# and prints a summary table of the targets. Everything listens on and
# sends to 127.0.0.1 only (ports 9600-9699, admin 2906), every load is
# bounded in time and count, and every process started here is stopped on
# exit. Results (JSON and text) go to bench/out/<UTC time>/. Every
# request carries a different body (bench/load, bench/post.lua), so no
# forwarder is helped by shared calls or a cache; bench/cache.sh measures
# those, and bench/forwardcpu.sh the forwarders' CPU per request.
#
# B alone, with more time per benchmark:
#   go test -run '^$' -bench . -benchmem -cpu 1 ./bench/ | go run ./bench/benchtable
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# The published figures are on the third-party design corpus
# (CONTRIBUTING.md): DESIGN_CORPUS names its folder.
CORPUS=${DESIGN_CORPUS:?"set DESIGN_CORPUS to the design corpus folder (see CONTRIBUTING.md)"}
OUT=${BENCH_OUT:-$ROOT/bench/out/$(date -u +%Y%m%dT%H%M%SZ)}
BIN=$(mktemp -d /tmp/designbridge-bench.XXXXXX)
mkdir -p "$OUT"

# The 40 KB design used by A and D (a current-era email, 11 rows).
DESIGN=${DESIGN:-$CORPUS/beefree-sdk-csapi-simple-integration__initial-template.json}

export BENCH_TOKEN=bench-token
export UPSTREAM_PORT=9601 BRIDGE_PORT=9602 PROXY_PORT=9603 CONTENT_PORT=9610
export BENCH_ADMIN_PORT=2906 BENCH_HTTP_PORT=9690 BENCH_HTTPS_PORT=9691
EXPRESS_JSON_PORT=9604
EXPRESS_RAW_PORT=9605

if [ "${QUICK:-0}" = 1 ]; then
	A_DURATION=1s A_ROUNDS=1 MEM_COUNT=10 MJML_N=10 MJML_WARMUP=5 MJML_ROUNDS=2 MJML_GO_TIME=200ms D_DURATION=3s B_TIME=50ms
else
	# C: mjml keeps getting faster for a thousand renders or more (its
	# mean over renders 250–500 of one process was 1.8 ms for the
	# smallest template, over renders 2750–3000 1.4 ms); over the 36
	# designs each engine's process gets 300 warm-up renders per design
	# (10,800 in all) before the first is timed, then 160 timed renders
	# per design over 8 rounds.
	A_DURATION=3s A_ROUNDS=3 MEM_COUNT=50 MJML_N=160 MJML_WARMUP=300 MJML_ROUNDS=8 MJML_GO_TIME=800ms D_DURATION=10s B_TIME=200ms
fi

PIDS=()
cleanup() {
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$BIN"
}
trap cleanup EXIT

step() { printf '\n=== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

# wait_port PORT: until something listens on 127.0.0.1:PORT (at most 20 s).
wait_port() {
	for _ in $(seq 1 200); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	echo "nothing listens on 127.0.0.1:$1" >&2
	return 1
}

# start NAME CMD...: run CMD in the background, logging to $OUT/NAME.log.
start() {
	local name=$1
	shift
	"$@" >"$OUT/$name.log" 2>&1 &
	PIDS+=($!)
	LAST_PID=$!
}

stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# A fresh Caddy per phase, with its own throwaway config/data dirs.
start_caddy() {
	local name=$1 config=$2
	mkdir -p "$BIN/xdg-$name"
	start "caddy-$name" env XDG_CONFIG_HOME="$BIN/xdg-$name" XDG_DATA_HOME="$BIN/xdg-$name" HOME="$BIN/xdg-$name" \
		"$BIN/caddy" run --config "$config" --adapter caddyfile
	CADDY_PID=$LAST_PID
}

step "build"
go build -o "$BIN/caddy" ./cmd/caddy
go build -o "$BIN/upstream" ./bench/upstream
go build -o "$BIN/load" ./bench/load
go build -o "$BIN/mjmlcompare" ./bench/mjmlcompare
go build -o "$BIN/summary" ./bench/summary
go build -o "$BIN/benchtable" ./bench/benchtable
go test -c -o "$BIN/bench.test" ./bench/

step "install"
if ! command -v wrk >/dev/null 2>&1; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
command -v node >/dev/null || { echo "node is required (Node 20)" >&2; exit 1; }
(cd bench/express && npm ci --no-audit --no-fund --loglevel=error)
(cd bench/mjml && npm ci --no-audit --no-fund --loglevel=error)
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "go: $(go version | cut -d' ' -f3); node: $(node --version); wrk: $(wrk -v 2>&1 | head -1 | cut -d' ' -f2)"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/machine.txt"

step "A. forwarding: direct vs design_bridge vs reverse_proxy vs Express (40 KB design)"
start upstream "$BIN/upstream" -addr "127.0.0.1:$UPSTREAM_PORT" -token "$BENCH_TOKEN"
UPSTREAM_PID=$LAST_PID
start_caddy forward bench/caddy/forward.Caddyfile
start express-json env BODY=json PORT=$EXPRESS_JSON_PORT UPSTREAM="http://127.0.0.1:$UPSTREAM_PORT" TOKEN="$BENCH_TOKEN" node bench/express/server.js
EXPRESS_JSON_PID=$LAST_PID
start express-raw env BODY=raw PORT=$EXPRESS_RAW_PORT UPSTREAM="http://127.0.0.1:$UPSTREAM_PORT" TOKEN="$BENCH_TOKEN" node bench/express/server.js
EXPRESS_RAW_PID=$LAST_PID
for p in $UPSTREAM_PORT $BRIDGE_PORT $PROXY_PORT $EXPRESS_JSON_PORT $EXPRESS_RAW_PORT; do wait_port "$p"; done
PATH_HTML=/v1/message/html
"$BIN/load" -title "A. forwarding, $(($(stat -c %s "$DESIGN") / 1024)) KB design, $A_ROUNDS interleaved round(s) of $A_DURATION" \
	-target "direct=http://127.0.0.1:$UPSTREAM_PORT$PATH_HTML;Authorization=Bearer $BENCH_TOKEN" \
	-target "bridge=http://127.0.0.1:$BRIDGE_PORT$PATH_HTML" \
	-target "proxy=http://127.0.0.1:$PROXY_PORT$PATH_HTML" \
	-target "express-json=http://127.0.0.1:$EXPRESS_JSON_PORT$PATH_HTML" \
	-target "express-raw=http://127.0.0.1:$EXPRESS_RAW_PORT$PATH_HTML" \
	-body "$DESIGN" -c 1,16,64 -d "$A_DURATION" -rounds "$A_ROUNDS" -baseline direct -pid "$CADDY_PID" \
	-json "$OUT/a-forward.json" | tee "$OUT/a-forward.txt" || echo "!!! A: some requests failed (see above)"
stop "$EXPRESS_JSON_PID"
stop "$EXPRESS_RAW_PID"
stop "$CADDY_PID"

step "A. memory: $MEM_COUNT x 10 MiB bodies, sequential then 8 at a time, fresh Caddy each"
for target in bridge proxy; do
	start_caddy "memory-$target" bench/caddy/forward.Caddyfile
	wait_port $BRIDGE_PORT
	wait_port $PROXY_PORT
	port=$BRIDGE_PORT
	[ "$target" = proxy ] && port=$PROXY_PORT
	"$BIN/load" -title "A. memory, $target (Caddy pid $CADDY_PID)" \
		-target "$target=http://127.0.0.1:$port$PATH_HTML" \
		-body-bytes $((10 << 20)) -c 1,8 -n "$MEM_COUNT" -d 60s -warmup 0 -pid "$CADDY_PID" \
		-json "$OUT/a-memory-$target.json" | tee "$OUT/a-memory-$target.txt" || echo "!!! A memory: some requests failed"
	stop "$CADDY_PID"
done
stop "$UPSTREAM_PID"

step "C. render.HTML vs mrml and mjml, one core for every side"
# Ours runs on one P; Node's collector and compiler threads would take a
# second core if one were free (its CPU time per render exceeds its wall
# time unpinned). taskset gives both sides the same single CPU; Node
# inherits it. mjmlcompare prints the CPUs it was allowed and each side's
# CPU time.
PIN=()
if command -v taskset >/dev/null 2>&1; then
	PIN=(taskset -c "${C_CPU:-$(($(nproc) - 1))}")
else
	echo "taskset not found: C runs unpinned (Node may use more than one core)"
fi
"${PIN[@]}" "$BIN/mjmlcompare" -corpus "$CORPUS" -node-dir bench/mjml -engines mrml,mjml -designs all \
	-n "$MJML_N" -warmup "$MJML_WARMUP" -rounds "$MJML_ROUNDS" -go-time "$MJML_GO_TIME" \
	-out "$OUT/mjml" -json "$OUT/c-mjml.json" | tee "$OUT/c-mjml.txt" || echo "!!! C failed"

step "D. content_service: renders of the 40 KB design per second (wrk, 2 threads)"
start_caddy content bench/caddy/content.Caddyfile
wait_port $CONTENT_PORT
code=$(curl -s -o "$OUT/d-sample.html" -w '%{http_code}' -X POST --data-binary "@$DESIGN" \
	-H "Authorization: Bearer $BENCH_TOKEN" -H 'Content-Type: application/json' "http://127.0.0.1:$CONTENT_PORT$PATH_HTML")
echo "sample render: HTTP $code, $(stat -c %s "$OUT/d-sample.html") bytes"
# Warm up, then measure at two connection counts.
BENCH_BODY=$DESIGN wrk -t2 -c16 -d2s -s bench/post.lua "http://127.0.0.1:$CONTENT_PORT$PATH_HTML" >/dev/null
for c in 16 64; do
	BENCH_BODY=$DESIGN wrk -t2 -c$c -d"$D_DURATION" --latency -s bench/post.lua \
		"http://127.0.0.1:$CONTENT_PORT$PATH_HTML" | tee "$OUT/d-wrk-c$c.txt"
done
stop "$CADDY_PID"

step "B. renderer per corpus template vs json.Unmarshal (one core, -benchtime $B_TIME)"
(cd bench && DESIGN_CORPUS="$CORPUS" "$BIN/bench.test" -test.run '^$' -test.bench . -test.benchmem \
	-test.cpu 1 -test.benchtime "$B_TIME") >"$OUT/b-render.txt" || echo "!!! B failed"
"$BIN/benchtable" -json "$OUT/b-render.json" <"$OUT/b-render.txt" | tee "$OUT/b-render-table.txt" || echo "!!! B table failed"

step "Summary ($OUT)"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/machine.txt"
"$BIN/summary" -dir "$OUT" | tee "$OUT/summary.txt"
