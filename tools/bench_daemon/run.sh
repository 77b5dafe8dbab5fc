#!/bin/bash
# Roost's daemon against HTCondor 23.9.6, same machine, same run, same thin
# hooks (tools/bench_daemon/hooks: bash builtins only, no helper processes).
#
#   tools/bench_daemon/run.sh [N=300] [REPS=3] [K=20]
#
# For each of "static" (2 static slots) and "pslot" (one partitionable slot
# of 2 CPUs), REPS times: start the daemon, drop N /bin/true job ads into
# the spool at once, wait for N JOB_EXITs; jobs per second, the daemon's own
# CPU per job, each starter's CPU until JOB_EXIT, the daemon's resident
# memory and each starter's peak. Then K single /bin/date jobs dropped at
# random times into idle static slots: drop -> FETCH_WORK start (the poll
# wait) and FETCH_WORK done -> job exec (the pipeline). Then the physical
# limit: the same hooks and /bin/true run by two bash loops, nothing else.
#
# HTCondor runs from ../shared/realcondor (CHROOT, default /tmp/trixie;
# create it with its bootstrap.sh); SKIP_HTCONDOR=1 measures Roost only;
# KEEP=1 keeps each Roost run's directory (its event log) for a look;
# ROOST_CONFIG_EXTRA is added to Roost's configuration (for A/B runs, e.g.
# ROOST_CONFIG_EXTRA='ROOST_SPARE_STARTERS = 0'); ROOST_STATIC_STARTER goes
# to tools/install.sh. EXECUTE_ON=DIR puts both daemons' EXECUTE on DIR's
# file system (Roost's in DIR/roost-execute; HTCondor's DIR/htcondor-execute
# mounted over the chroot's /var/lib/condor/execute): e.g. a journaled ext4
# when this machine's root file system has no journal (docs/daemon.md).
# Results: target/bench-daemon/<time>/ and a summary on stdout.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tools/bench_daemon
N=${1:-300}
REPS=${2:-3}
K=${3:-20}
CH=${CHROOT:-/tmp/trixie}
RC=${REALCONDOR:-$ROOT/../shared/realcondor}
OUT=${OUT:-$ROOT/target/bench-daemon/$(date +%Y%m%d-%H%M%S)}
HZ=$(getconf CLK_TCK)
mkdir -p "$OUT"
# Roost as tools/install.sh installs it: the starter static where the musl
# target is installed (ROOST_STATIC_STARTER=0: dynamic, for A/B runs).
PREFIX=$ROOT/target/bench-install
"$ROOT/tools/install.sh" "$PREFIX" >"$OUT/install.txt" 2>&1 || { cat "$OUT/install.txt"; exit 1; }
ROOST=$PREFIX/bin/roost
have_condor() { [ -z "${SKIP_HTCONDOR:-}" ] && [ -x "$CH/usr/sbin/condor_startd" ] && [ -d "$RC" ]; }
if [ -n "${EXECUTE_ON:-}" ]; then
    mkdir -p "$EXECUTE_ON/roost-execute" "$EXECUTE_ON/htcondor-execute"
    ROOST_CONFIG_EXTRA="EXECUTE = $EXECUTE_ON/roost-execute
${ROOST_CONFIG_EXTRA:-}"
    if have_condor; then
        mount --bind "$EXECUTE_ON/htcondor-execute" "$CH/var/lib/condor/execute" || exit 1
        trap 'umount "$CH/var/lib/condor/execute"' EXIT
    fi
fi

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "== EXECUTE on: $(findmnt -no SOURCE,FSTYPE -T "${EXECUTE_ON:-/tmp}" | tr -s ' ')"
echo "== $(tail -1 "$OUT/install.txt")"

# The benchmark's directories under base $1: hooks, spool, taken, done, jobs.
prepare_base() {
    local b=$1
    mkdir -p "$b"/{hooks,spool,taken,done,jobs,stage}
    install -m 755 "$HERE"/hooks/* "$b/hooks/"
    chmod 755 "$b" "$b/hooks"
    chmod 1777 "$b/spool" "$b/taken" "$b/done" "$b/jobs"
    : >"$b/events.tsv"
    chmod 666 "$b/events.tsv"
}

# N job ads into $1/stage: /bin/true as $2 in $3, requests for p-slots.
stage_jobs() {
    local i
    for i in $(seq -w 1 "$N"); do
        printf 'BenchJob = "t%s"\nCmd = "/bin/true"\nOwner = "%s"\nIwd = "%s"\nJobUniverse = 5\nRequestCpus = 1\nRequestMemory = 64\nRequestDisk = 1024\n' \
            "$i" "$2" "$3" >"$1/stage/t$i.job"
    done
}

# utime stime (ticks) and the schedstat ns of every thread of pid $1.
cpu_of() {
    local s
    s=$(awk '{sub(/.*\) /, ""); print $12, $13}' "/proc/$1/stat")
    echo "$s $(cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {printf "%d", s}')"
}

wait_done() { # dir n
    local i
    for i in $(seq 1 12000); do
        [ "$(ls "$1" | wc -l)" -ge "$2" ] && return 0
        sleep 0.05
    done
    echo "timed out: $(ls "$1" | wc -l) of $2 done" >&2
    return 1
}

# One throughput run: base $1, daemon pid $2, starter comm $3, result dir $4.
measure() {
    local b=$1 pid=$2 comm=$3 d=$4 before
    mkdir -p "$d"
    before=$(cpu_of "$pid")
    rm -f "$d/stop"
    python3 "$HERE/sample.py" "$pid" "$comm" "$d/samples.tsv" "$d/stop" &
    local sampler=$!
    mv "$b"/stage/*.job "$b/spool/"
    wait_done "$b/done" "$N"
    sleep 0.5
    echo "$before $(cpu_of "$pid")" >"$d/cpu.txt"
    touch "$d/stop"
    wait "$sampler"
    cp "$b/events.tsv" "$d/"
    python3 "$HERE/analyze.py" throughput "$d" "$N" "$HZ" | tee "$d/summary.txt"
}

roost_config() { # base mode
    local slots
    if [ "$2" = pslot ]; then
        slots='NUM_SLOTS_TYPE_1 = 1
SLOT_TYPE_1 = cpus=100%, memory=100%
SLOT_TYPE_1_PARTITIONABLE = True'
    else
        slots='NUM_SLOTS = 2
SLOT_TYPE_1 = cpus=1
NUM_SLOTS_TYPE_1 = 2'
    fi
    cat >"$1/condor_config" <<EOF
LOCAL_DIR = $1/node
LOG = \$(LOCAL_DIR)/log
EXECUTE = \$(LOCAL_DIR)/execute
SPOOL = \$(LOCAL_DIR)/spool
CONDOR_IDS = 65534.65534
NUM_CPUS = 2
MEMORY = 4096
$slots
START = True
IS_OWNER = False
SUSPEND = False
CONTINUE = True
PREEMPT = False
KILL = False
WANT_SUSPEND = False
WANT_VACATE = False
RANK = 0
POLLING_INTERVAL = 5
UPDATE_INTERVAL = 5
RunBenchmarks = False
STARTD_JOB_HOOK_KEYWORD = ROOST
ROOST_HOOK_FETCH_WORK = $1/hooks/fetch_work
ROOST_HOOK_REPLY_FETCH = $1/hooks/reply_fetch
ROOST_HOOK_EVICT_CLAIM = $1/hooks/evict_claim
ROOST_HOOK_JOB_EXIT = $1/hooks/job_exit
FetchWorkDelay = ifThenElse(State == "Claimed" && Activity == "Idle", 0, 1)
${ROOST_CONFIG_EXTRA:-}
EOF
}

roost_start() { # base mode -> sets RPID
    roost_config "$1" "$2"
    "$ROOST" startd -f --config "$1/condor_config" >"$1/daemon.out" 2>&1 &
    RPID=$!
    local i
    for i in $(seq 1 200); do
        "$ROOST" status --config "$1/condor_config" >/dev/null 2>&1 && break
        sleep 0.05
    done
    sleep 1
}

roost_stop() { # base
    "$ROOST" off -fast --config "$1/condor_config" >/dev/null 2>&1
    wait "$RPID"
}

condor_pid() {
    local p
    for p in $(pgrep -x condor_startd); do
        [ "$(readlink "/proc/$p/root")" = "$(readlink -f "$CH")" ] && echo "$p"
    done
}

condor_start() { # mode
    bash "$RC/stop.sh" >/dev/null 2>&1
    rm -rf "$CH/srv/roost/log" "$CH/srv/roost/claimed" "$CH/srv/roost/spool" "$CH/srv/roost/taken" \
        "$CH/srv/roost/done" "$CH/srv/roost/stage"
    rm -f "$CH"/var/log/condor/*Log* "$CH"/var/log/condor/StarterLog.*
    SLOTS=$1 DEBUG=default HOOKLOG=min STARTER_HOOKS=exit bash "$RC/setup.sh" >"$OUT/condor-setup.txt" 2>&1
    prepare_base "$CH/srv/roost"
    chroot "$CH" install -d -o roost /srv/roost/jobs/tp /srv/roost/jobs/lat
    sleep 5
}

summary() { # label dir...
    local label=$1
    shift
    python3 - "$label" "$@" <<'PY'
import statistics as st, sys
label, dirs = sys.argv[1], sys.argv[2:]
vals = {}
for d in dirs:
    for line in open(f"{d}/summary.txt"):
        k, v = line.split()[:2]
        try:
            vals.setdefault(k, []).append(float(v))
        except ValueError:
            pass
keys = ["jobs_per_s", "daemon_cpu_ms_per_job", "starter_cpu_ms_per_job", "daemon_rss_mb_max",
        "starter_peak_rss_mb_median", "daemon_uss_mb_max", "starter_peak_uss_mb_median", "rejects"]
print(label + ": " + "; ".join(
    f"{k} {st.median(vals[k]):.2f} [{min(vals[k]):.2f}-{max(vals[k]):.2f}]" for k in keys if k in vals))
PY
}

for mode in static pslot; do
    dirs=()
    for rep in $(seq 1 "$REPS"); do
        b=$(mktemp -d /tmp/roost-bench.XXXXXX)
        prepare_base "$b"
        roost_start "$b" "$mode"
        stage_jobs "$b" nobody "$b/jobs"
        echo "== roost $mode rep $rep"
        measure "$b" "$RPID" roost-starter "$OUT/roost-$mode-$rep"
        dirs+=("$OUT/roost-$mode-$rep")
        roost_stop "$b"
        if [ -n "${KEEP:-}" ]; then echo "kept $b"; else rm -rf "$b"; fi
    done
    summary "roost $mode" "${dirs[@]}" | tee -a "$OUT/summary.txt"
    if have_condor; then
        dirs=()
        for rep in $(seq 1 "$REPS"); do
            condor_start "$mode"
            stage_jobs "$CH/srv/roost" roost /srv/roost/jobs/tp
            echo "== htcondor $mode rep $rep"
            measure "$CH/srv/roost" "$(condor_pid)" condor_starter "$OUT/htcondor-$mode-$rep"
            dirs+=("$OUT/htcondor-$mode-$rep")
        done
        bash "$RC/stop.sh" >/dev/null 2>&1
        summary "htcondor $mode" "${dirs[@]}" | tee -a "$OUT/summary.txt"
    fi
done

# Latency: K single jobs into idle static slots. $1 base as the daemon sees
# it, $2 the same on this side, $3 owner, $4 result dir.
latency() {
    local seen=$1 here=$2 owner=$3 d=$4 k
    mkdir -p "$d"
    : >"$d/drops.txt"
    for k in $(seq -w 1 "$K"); do
        sleep "$(awk -v s=$RANDOM 'BEGIN {printf "%.3f", 0.2 + (s % 2000) / 1000}')"
        printf 'BenchJob = "l%s"\nCmd = "/bin/date"\nArgs = "+%%s%%N"\nOwner = "%s"\nIwd = "%s/jobs/lat"\nOut = "l%s.out"\nJobUniverse = 5\n' \
            "$k" "$owner" "$seen" "$k" >"$here/stage/l$k.job"
        mv "$here/stage/l$k.job" "$here/spool/"
        echo "l$k $(date +%s%N)" >>"$d/drops.txt"
        local i
        for i in $(seq 1 200); do
            [ -e "$here/done/l$k" ] && break
            sleep 0.05
        done
    done
    for k in $(seq -w 1 "$K"); do echo "l$k $(cat "$here/jobs/lat/l$k.out" 2>/dev/null)"; done >"$d/starts.txt"
    cp "$here/events.tsv" "$d/"
    python3 "$HERE/analyze.py" latency "$d" | tee "$d/summary.txt"
}

echo "== roost latency"
b=$(mktemp -d /tmp/roost-bench.XXXXXX)
prepare_base "$b"
mkdir -p "$b/jobs/lat"
chmod 1777 "$b/jobs/lat"
roost_start "$b" static
latency "$b" "$b" nobody "$OUT/roost-latency" | sed 's/^/roost /' | tee -a "$OUT/summary.txt"
roost_stop "$b"
rm -rf "$b"
if have_condor; then
    echo "== htcondor latency"
    condor_start static
    latency /srv/roost "$CH/srv/roost" roost "$OUT/htcondor-latency" | sed 's/^/htcondor /' | tee -a "$OUT/summary.txt"
    bash "$RC/stop.sh" >/dev/null 2>&1
fi

# The physical limit: two loops running the hooks and the job, nothing else.
phys_worker() {
    local b=$1 ad
    while :; do
        ad=$(printf 'Name = "slot1@bench"\nState = "Unclaimed"\n' | "$b/hooks/fetch_work")
        [ -n "$ad" ] || return 0
        printf '%s\n-----\nName = "slot1@bench"\n' "$ad" | "$b/hooks/reply_fetch" accept
        /bin/true
        printf '%s\n' "$ad" | "$b/hooks/job_exit" exit
    done
}
echo "== physical limit"
b=$(mktemp -d /tmp/roost-bench.XXXXXX)
prepare_base "$b"
stage_jobs "$b" nobody "$b/jobs"
mv "$b"/stage/*.job "$b/spool/"
t0=$(date +%s%N)
phys_worker "$b" &
phys_worker "$b" &
wait
t1=$(date +%s%N)
echo "physical limit: jobs_per_s $(awk -v n="$(ls "$b/done" | wc -l)" -v t="$((t1 - t0))" 'BEGIN {printf "%.1f", n / (t / 1e9)}')" |
    tee -a "$OUT/summary.txt"
rm -rf "$b"
echo "== summary ($OUT/summary.txt)"
cat "$OUT/summary.txt"
