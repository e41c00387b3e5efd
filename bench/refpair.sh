# Sourced by the before/after load scripts (contentcpu.sh, forwardcpu.sh):
# with REF and NAME set, makes $TMP and $OUT, builds Caddy at REF
# ($TMP/bin/caddy-old) and from the working tree ($TMP/bin/caddy-new) and
# bench/load, and on exit stops every process in PIDS and removes the
# worktree of REF. Also defines wait_port PORT.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "/tmp/designbridge-$NAME.XXXXXX")
OUT=${OUT:-$TMP/out}
mkdir -p "$OUT" "$TMP/bin"
PIDS=()
cleanup() {
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	git -C "$ROOT" worktree remove --force "$TMP/old" 2>/dev/null || true
	rm -rf "$TMP/old" "$TMP/bin"
}
trap cleanup EXIT
git -C "$ROOT" worktree add --detach --quiet "$TMP/old" "$REF"
(cd "$TMP/old" && go build -o "$TMP/bin/caddy-old" ./cmd/caddy)
(cd "$ROOT" && go build -o "$TMP/bin/caddy-new" ./cmd/caddy && go build -o "$TMP/bin/load" ./bench/load)

wait_port() {
	for _ in $(seq 1 200); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "nothing listens on 127.0.0.1:$1" >&2
	return 1
}
