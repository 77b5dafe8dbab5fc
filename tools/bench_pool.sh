#!/bin/sh
# The pool at scale: a private etcd (Debian's etcd-server) on loopback,
# NODES synthetic nodes' slot ads written into it (`roost pool-load`), then
# `roost status -pool` read over all of them, the eventd's work at one look
# over them (`roost eventd-round`), and etcd's memory. Prints one
# line per measure for docs/performance.md.
#
#   tools/bench_pool.sh [NODES [SLOTS]]      (default 10000 2; release build,
#                                             or the binary ROOST names)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NODES=${1:-10000}
SLOTS=${2:-2}
ROOST=${ROOST:-$ROOT/target/release/roost}
ROOST_DEVTOOLS=${ROOST_DEVTOOLS:-$ROOT/target/release/roost-devtools}
{ [ -x "$ROOST" ] && [ -x "$ROOST_DEVTOOLS" ]; } || (cd "$ROOT" && cargo build --release -q)
ETCD=$(command -v etcd || echo "$ROOT/target/etcd/usr/bin/etcd")
W=$(mktemp -d)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
C=$(port); P=$(port)
"$ETCD" --name bench --data-dir "$W/data" \
    --listen-client-urls "http://127.0.0.1:$C" --advertise-client-urls "http://127.0.0.1:$C" \
    --listen-peer-urls "http://127.0.0.1:$P" --initial-advertise-peer-urls "http://127.0.0.1:$P" \
    --initial-cluster "bench=http://127.0.0.1:$P" >"$W/etcd.log" 2>&1 &
EPID=$!
trap 'kill $EPID 2>/dev/null; rm -rf "$W"' EXIT
until curl -fs "http://127.0.0.1:$C/health" >/dev/null 2>&1; do sleep 0.2; done
printf 'ROOST_POOL_ETCD = 127.0.0.1:%s\nROOST_POOL_PREFIX = /bench\nROOST_POOL_TIMEOUT = 60\n' "$C" >"$W/config"
rss() { awk '/VmRSS/ {print $2}' "/proc/$EPID/status"; }
echo "etcd $("$ETCD" --version | head -1 | awk '{print $3}'), RSS at start: $(rss) KiB"
"$ROOST_DEVTOOLS" pool-load --config "$W/config" --nodes "$NODES" --slots "$SLOTS"
echo "etcd RSS after: $(rss) KiB; data dir: $(du -sk "$W/data" | cut -f1) KiB"
for i in 1 2 3 4 5; do
    s=$(date +%s.%N)
    n=$(CONDOR_CONFIG="$W/config" "$ROOST" status -pool -af Name | wc -l)
    e=$(date +%s.%N)
    echo "status -pool: $n slot ads in $(echo "$e - $s" | bc) s"
done
s=$(date +%s.%N)
CONDOR_CONFIG="$W/config" "$ROOST" status -pool -total >/dev/null
e=$(date +%s.%N)
echo "status -pool -total: $(echo "$e - $s" | bc) s"
for i in 1 2 3; do
    echo "eventd round: $("$ROOST_DEVTOOLS" eventd-round --config "$W/config")"
done
echo "etcd RSS at the end: $(rss) KiB"
