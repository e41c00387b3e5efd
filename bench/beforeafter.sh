#!/usr/bin/env bash
# Decode+render before and after a change, measured in one run: builds the
# bench package's test binary at a git ref and from the working tree, runs
# the two alternately on one CPU, and prints benchstat's comparison.
#
#   bash bench/beforeafter.sh <ref> [benchmark regexp]
#
# The regexp defaults to every corpus template's Decode, Render and
# DecodeRender. Both builds run the working tree's bench/*_test.go.
# DecodeRender also reports cpu-ns/op, the process's CPU time per render,
# which holds up on a busy machine better than the wall time. DESIGN_CORPUS names the corpus (else the project's own
# designs). ROUNDS (default 6) alternations of COUNT (default 2) runs each.
# OLD_PGO and NEW_PGO (default off) pass a CPU profile to either build:
#   NEW_PGO=/tmp/cpu.pprof bash bench/beforeafter.sh HEAD
# measures what profile-guided optimisation would buy.
set -euo pipefail
REF=${1:?"usage: beforeafter.sh <git ref> [benchmark regexp]"}
PATTERN=${2:-'Corpus/.*/(Decode|Render|DecodeRender)$'}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d /tmp/designbridge-beforeafter.XXXXXX)
cleanup() {
	git -C "$ROOT" worktree remove --force "$TMP/old" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
git -C "$ROOT" worktree add --detach --quiet "$TMP/old" "$REF"
# Both sides run the working tree's benchmarks (they use only the
# exported API), so that a measure added since REF is on both sides.
cp "$ROOT"/bench/*_test.go "$TMP/old/bench/"
(cd "$TMP/old" && go test -c -pgo="${OLD_PGO:-off}" -o "$TMP/old.test" ./bench/)
(cd "$ROOT" && go test -c -pgo="${NEW_PGO:-off}" -o "$TMP/new.test" ./bench/)
PIN=()
command -v taskset >/dev/null && PIN=(taskset -c "${CPU:-$(($(nproc) - 1))}")
run() { # tree binary output
	(cd "$1/bench" && "${PIN[@]}" "$2" -test.run '^$' -test.bench "$PATTERN" -test.benchmem \
		-test.cpu 1 -test.count "${COUNT:-2}" -test.benchtime "${BENCHTIME:-200ms}") >>"$3"
}
for _ in $(seq "${ROUNDS:-6}"); do
	run "$TMP/old" "$TMP/old.test" "$TMP/old.txt"
	run "$ROOT" "$TMP/new.test" "$TMP/new.txt"
done
echo "old: $REF ($(git -C "$ROOT" rev-parse --short "$REF")), new: the working tree"
go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da before="$TMP/old.txt" after="$TMP/new.txt"
