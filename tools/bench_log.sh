#!/usr/bin/env bash
# The event log at scale (issue 5's targets), measured in one run on this
# machine: the disk's physical limit (fsyncs per second), non-durable batch
# appends (`roost log-writer --claims N` writes N claims' lifecycles, 20
# events each, in batches of 2,000 and one flush), bytes on disk per event,
# and reading it back: `roost-log verify`, `state` (replay of every event),
# `claims` (the audit trail) and `list --json`.
#
#   tools/bench_log.sh [CLAIMS]      # default 50,000 claims = 1,000,009 events
set -euo pipefail
cd "$(dirname "$0")/.."
claims=${1:-50000}
cargo build --release --quiet --bin roost --bin roost-log --bin roost-devtools
dir=$(mktemp -d "${TMPDIR:-/tmp}/roost-bench-log.XXXXXX")
trap 'rm -rf "$dir"' EXIT

echo "== machine"
nproc
grep -m1 'model name' /proc/cpuinfo || true
date -u +%Y-%m-%dT%H:%MZ

echo "== physical limit: 1,000 x (write 512 bytes + fsync) in $dir"
python3 - "$dir" <<'PY'
import os, sys, time
path = os.path.join(sys.argv[1], "fsync-probe")
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
t = time.perf_counter()
for _ in range(1000):
    os.write(fd, b"x" * 512)
    os.fsync(fd)
s = time.perf_counter() - t
os.close(fd)
os.unlink(path)
print(f"{1000 / s:.0f} fsyncs/s")
PY

timed() {
    local what=$1; shift
    local t0 t1
    t0=$(date +%s.%N)
    "$@" > /dev/null
    t1=$(date +%s.%N)
    printf '%-40s %.2f s\n' "$what" "$(echo "$t1 - $t0" | bc)"
}

echo "== write"
target/release/roost-devtools log-writer "$dir/log" --claims "$claims"
bytes=$(du -sb "$dir/log" | cut -f1)
events=$(target/release/roost-log --log "$dir/log" verify | sed -n 's/^ok: \([0-9]*\) events$/\1/p')
echo "events: $events; bytes on disk: $bytes ($((bytes / events)) per event)"

echo "== read"
timed "roost-log verify" target/release/roost-log --log "$dir/log" verify
timed "roost-log state (replay)" target/release/roost-log --log "$dir/log" state
timed "roost-log claims" target/release/roost-log --log "$dir/log" claims
timed "roost-log claims --json" target/release/roost-log --log "$dir/log" claims --json
timed "roost-log list --json" target/release/roost-log --log "$dir/log" list --json
