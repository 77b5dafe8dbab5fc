#!/bin/bash
# File transfer side by side, in one sitting: a job whose inputs are 1,000
# small files (4 KiB each, in a directory sent whole) and one 1 GiB file;
# it renames them in its sandbox and lists the new names as its outputs,
# so the same 1,000 files and 1 GiB travel back. Run REPS times (default
# 3) by `roost schedd` + `roost startd` and by a real HTCondor 23.9.6
# pool (../shared/realcondor's chroot: schedd, negotiator, startd, shadow,
# starter), each side also running REPS times the same job with no files
# (the baseline: submit, match, start, end). Prints per side the median
# wall time from submit to the job in the history, the job's
# CompletionDate - JobCurrentStartDate (whole seconds from its start on the node to its
# end: the transfers, as the job itself takes no time; both sides keep it
# alike), and the median CPU of every process of the side (daemons,
# hooks, starters, shadows: one cpuacct cgroup each), with and without the
# baseline's. HTCondor's submit-to-history time is mostly its negotiation
# cycle; the node's time is the comparison.
#
# Needs root (the chroot, cgroups); Roost's jobs run as nobody. About ten
# minutes with REPS=3.
#
#   tools/bench_transfer.sh [REPS]    (ROOST_BIN: the directory of roost,
#                                      default target/release; SKIP_HTCONDOR=1;
#                                      REALCONDOR, CHROOT as for the router tools)
set -euo pipefail
REPS=${1:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${ROOST_BIN:-$ROOT/target/release}
RC=${REALCONDOR:-$(cd "$ROOT/../shared/realcondor" && pwd)}
CH=${CHROOT:-/tmp/trixie}
CG=/sys/fs/cgroup/cpuacct
[ "$(id -u)" = 0 ] || { echo "run as root (chroot, cgroups)" >&2; exit 1; }
[ -d "$CG" ] || { echo "no cpuacct cgroup at $CG" >&2; exit 1; }

# The files: the same bytes on both sides.
data() { # DIR
    mkdir -p "$1/small"
    for i in $(seq -w 1 1000); do head -c 4096 /dev/urandom > "$1/small/f$i"; done
    head -c 1073741824 /dev/urandom > "$1/big"
    chmod -R a+rwX "$1"
}
job() { # FILES(yes|no) -> a submit description on stdout
    if [ "$1" = yes ]; then
        printf '%s\n' 'executable = /bin/sh' \
            'arguments = "-c '"'"'mv small small.out && mv big big.out'"'"'"' \
            'transfer_executable = false' 'should_transfer_files = YES' \
            'when_to_transfer_output = ON_EXIT' 'transfer_input_files = small, big' \
            'transfer_output_files = small.out, big.out' 'queue'
    else
        printf '%s\n' 'executable = /bin/true' 'transfer_executable = false' \
            'should_transfer_files = YES' 'when_to_transfer_output = ON_EXIT' 'queue'
    fi
}
now() { date +%s.%N; }
cpu_ns() { cat "$CG/$1/cpuacct.usage"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# --- Roost ---------------------------------------------------------------
roost_side() {
    local D; D=$(mktemp -d /tmp/roost-bench-transfer.XXXXXX)
    chmod 755 "$D"; mkdir -p "$D/work" "$D/hooks"; chmod 777 "$D/work"
    data "$D/work"
    for h in fetch:FETCH_WORK reply:REPLY_FETCH exit:JOB_EXIT evict:EVICT_CLAIM update:UPDATE_JOB_INFO; do
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
CONDOR_IDS = 65534.65534
QUEUE_SUPER_USERS = root, nobody
NUM_CPUS = 2
SLOT_TYPE_1 = cpus=1
NUM_SLOTS_TYPE_1 = 2
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
    mkdir -p "$CG/roost-bench"
    (
        echo $BASHPID > "$CG/roost-bench/cgroup.procs"
        export CONDOR_CONFIG="$D/condor_config"
        "$BIN/roost" schedd -f >/dev/null 2>&1 &
        "$BIN/roost" startd -f >/dev/null 2>&1 &
        wait
    ) &
    local pool=$!
    local CONDOR_CONFIG="$D/condor_config"
    export CONDOR_CONFIG
    until "$BIN/roost" q >/dev/null 2>&1; do sleep 0.1; done
    sleep 2
    local n=0
    run_roost() { # FILES
        job "$1" > "$D/work/b.sub"; chmod 644 "$D/work/b.sub"
        rm -rf "$D/work/small.out" "$D/work/big.out"
        n=$((n + 1))
        local c0 t0 t1 c1
        c0=$(cpu_ns roost-bench); t0=$(now)
        su nobody -s /bin/sh -c "cd $D/work && CONDOR_CONFIG=$D/condor_config $BIN/roost submit b.sub" >/dev/null
        until [ "$("$BIN/roost" history -af ClusterId | wc -l)" -ge "$n" ]; do sleep 0.05; done
        t1=$(now); c1=$(cpu_ns roost-bench)
        if [ "$1" = yes ]; then
            [ "$(ls "$D/work/small.out" | wc -l)" = 1000 ] && cmp -s "$D/work/big" "$D/work/big.out" \
                || { echo "roost: the outputs did not come back whole" >&2; exit 1; }
        fi
        local ran
        ran=$("$BIN/roost" history -af "CompletionDate - JobCurrentStartDate" -constraint "ClusterId == $n")
        echo "$(echo "$t1 - $t0" | bc) $(( (c1 - c0) / 1000000 )) ${ran%.*}"
    }
    for _ in $(seq "$REPS"); do run_roost no >> "$OUT/roost.base"; done
    for _ in $(seq "$REPS"); do run_roost yes >> "$OUT/roost.files"; done
    # Every process of the side is in its cgroup.
    kill $(grep -v "^$pool\$" "$CG/roost-bench/cgroup.procs") 2>/dev/null || true
    wait $pool 2>/dev/null || true
    sleep 1
    rmdir "$CG/roost-bench" 2>/dev/null || true
    rm -rf "$D"
}

# --- HTCondor ------------------------------------------------------------
htcondor_side() {
    unset CONDOR_CONFIG
    local W=/tmp/bench-transfer
    bash "$RC/stop.sh" >/dev/null 2>&1 || true
    rm -rf "$CH/var/spool/condor/"job_queue.log* "$CH/var/spool/condor/history"*
    rm -rf "${CH:?}$W" && mkdir -p "$CH$W"
    data "$CH$W"
    chmod 777 "$CH$W"
    mkdir -p "$CG/htcondor-bench"
    (
        echo $BASHPID > "$CG/htcondor-bench/cgroup.procs"
        EXTRA_CONFIG="DAEMON_LIST = MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD
STARTD_JOB_HOOK_KEYWORD =
NEGOTIATOR_INTERVAL = 2
NEGOTIATOR_MIN_INTERVAL = 1
SCHEDD_INTERVAL = 1
UID_DOMAIN = roost.test
FILESYSTEM_DOMAIN = roost.test" DEBUG=default HOOKLOG=min bash "$RC/setup.sh" >/dev/null
    )
    q() { chroot "$CH" "$@"; }
    until q condor_q -totals >/dev/null 2>&1; do sleep 0.5; done
    until [ "$(q condor_status -af Name 2>/dev/null | wc -l)" -ge 1 ]; do sleep 0.5; done
    sleep 3
    local n=0
    run_htcondor() { # FILES
        job "$1" > "$CH$W/b.sub"; chmod 644 "$CH$W/b.sub"
        rm -rf "$CH$W/small.out" "$CH$W/big.out"
        n=$((n + 1))
        local c0 t0 t1 c1
        c0=$(cpu_ns htcondor-bench); t0=$(now)
        q su roost -s /bin/sh -c "cd $W && condor_submit b.sub" >/dev/null
        until [ "$(q condor_history -af ClusterId 2>/dev/null | wc -l)" -ge "$n" ]; do sleep 0.05; done
        t1=$(now); c1=$(cpu_ns htcondor-bench)
        if [ "$1" = yes ]; then
            [ "$(ls "$CH$W/small.out" | wc -l)" = 1000 ] && cmp -s "$CH$W/big" "$CH$W/big.out" \
                || { echo "htcondor: the outputs did not come back whole" >&2; exit 1; }
        fi
        local ran
        ran=$(q condor_history -limit 1 -af "CompletionDate - JobCurrentStartDate" 2>/dev/null)
        echo "$(echo "$t1 - $t0" | bc) $(( (c1 - c0) / 1000000 )) ${ran%.*}"
    }
    for _ in $(seq "$REPS"); do run_htcondor no >> "$OUT/htcondor.base"; done
    for _ in $(seq "$REPS"); do run_htcondor yes >> "$OUT/htcondor.files"; done
    bash "$RC/stop.sh" >/dev/null 2>&1 || true
    sleep 1
    rmdir "$CG/htcondor-bench" 2>/dev/null || true
    rm -rf "${CH:?}$W"
}

OUT=$(mktemp -d /tmp/bench-transfer-out.XXXXXX)
roost_side
[ -n "${SKIP_HTCONDOR:-}" ] || htcondor_side
report() { # SIDE
    [ -f "$OUT/$1.files" ] || return 0
    local bw bc br fw fc fr
    bw=$(awk '{print $1}' "$OUT/$1.base" | median); bc=$(awk '{print $2}' "$OUT/$1.base" | median)
    br=$(awk '{print $3}' "$OUT/$1.base" | median)
    fw=$(awk '{print $1}' "$OUT/$1.files" | median); fc=$(awk '{print $2}' "$OUT/$1.files" | median)
    fr=$(awk '{print $3}' "$OUT/$1.files" | median)
    printf '%-9s files: %6.2f s (on the node %3d s) %6d ms CPU | baseline: %5.2f s (%2d s) %5d ms CPU | transfer CPU %6d ms\n' \
        "$1" "$fw" "$fr" "$fc" "$bw" "$br" "$bc" $((fc - bc))
}
echo "$REPS runs each; 1,000 x 4 KiB + 1 GiB in, and the same out (medians)"
report roost
report htcondor
echo "raw: $OUT"
