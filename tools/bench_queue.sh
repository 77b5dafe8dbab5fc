#!/bin/sh
# The queue's throughput, end to end on this machine: `roost submit` of N
# /bin/true jobs (default 1000) to a `roost schedd`, run by a `roost startd`
# with S static slots (default 2) through the queue hooks, until every job
# is in the history. Prints the wall time, jobs per second, and the CPU
# (user + system) of each daemon and of what it waited for (hooks and
# starters) per job. Runs as an ordinary user (nodes never run root's
# jobs): as root, it re-runs itself as `nobody`.
#
#   tools/bench_queue.sh [N] [SLOTS]     (ROOST_BIN: the directory of roost)
set -eu
N=${1:-1000}
SLOTS=${2:-2}
BIN=${ROOST_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/release}
if [ "$(id -u)" = 0 ]; then
    exec su nobody -s /bin/sh -c "ROOST_BIN=$BIN sh $(cd "$(dirname "$0")" && pwd)/bench_queue.sh $N $SLOTS"
fi
D=$(mktemp -d /tmp/roost-bench-queue.XXXXXX)
trap 'kill $SCHEDD $STARTD 2>/dev/null || true; sleep 1; rm -rf "$D"' EXIT
mkdir -p "$D/hooks" "$D/work"
for h in fetch:FETCH_WORK reply:REPLY_FETCH exit:JOB_EXIT evict:EVICT_CLAIM; do
    printf '#!/bin/sh\nexec %s/roost queue-hook %s --socket %s/lock/roost_schedd.sock "$@"\n' \
        "$BIN" "${h%%:*}" "$D" > "$D/hooks/${h%%:*}"
    chmod 755 "$D/hooks/${h%%:*}"
    echo "B_HOOK_${h##*:} = $D/hooks/${h%%:*}" >> "$D/hooks.conf"
done
cat > "$D/condor_config" <<CONF
LOCAL_DIR = $D
LOG = \$(LOCAL_DIR)/log
EXECUTE = \$(LOCAL_DIR)/execute
SPOOL = \$(LOCAL_DIR)/spool
LOCK = \$(LOCAL_DIR)/lock
NUM_CPUS = $SLOTS
SLOT_TYPE_1 = cpus=1
NUM_SLOTS_TYPE_1 = $SLOTS
START = True
IS_OWNER = False
SUSPEND = False
PREEMPT = False
KILL = False
WANT_SUSPEND = False
RunBenchmarks = False
STARTD_JOB_HOOK_KEYWORD = B
FetchWorkDelay = ifThenElse(State == "Claimed" && Activity == "Idle", 0, 1)
include : $D/hooks.conf
CONF
export CONDOR_CONFIG="$D/condor_config"
cd "$D/work"
"$BIN/roost" schedd -f >/dev/null 2>&1 &
SCHEDD=$!
"$BIN/roost" startd -f >/dev/null 2>&1 &
STARTD=$!
until "$BIN/roost" q >/dev/null 2>&1; do sleep 0.1; done
printf 'executable = /bin/true\nqueue %s\n' "$N" > bench.sub
cpu() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"; }
S0=$(cpu $SCHEDD); T0=$(cpu $STARTD)
start=$(date +%s.%N)
"$BIN/roost" submit bench.sub >/dev/null
until [ "$("$BIN/roost" history -af ProcId | wc -l)" -ge "$N" ]; do sleep 0.2; done
end=$(date +%s.%N)
S1=$(cpu $SCHEDD); T1=$(cpu $STARTD)
HZ=$(getconf CLK_TCK)
awk -v n="$N" -v s="$SLOTS" -v a="$start" -v b="$end" -v s0="$S0" -v s1="$S1" -v t0="$T0" -v t1="$T1" -v hz="$HZ" 'BEGIN {
    w = b - a
    printf "%d jobs on %d slots: %.1f s, %.1f jobs/s\n", n, s, w, n / w
    printf "schedd CPU %.2f ms/job; startd with its hooks and starters %.2f ms/job\n", (s1 - s0) / hz * 1000 / n, (t1 - t0) / hz * 1000 / n
}'
