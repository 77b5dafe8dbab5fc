#!/bin/sh
# HTCondor's side of tools/bench_queue.sh: a real HTCondor 23.9.6 access
# point and execute node on this machine (../shared/realcondor's chroot,
# started with its schedd and negotiator, fetch hooks off: its own
# matchmaking), `condor_submit` of N /bin/true jobs as an ordinary user,
# until none is left in the queue. Prints the wall time, jobs per second
# and the CPU per job of the schedd (with its shadows), the startd (with
# its starters), and the negotiator and collector. Needs root (chroot).
#
#   tools/bench_queue_htcondor.sh [N]      (REALCONDOR: the realcondor dir)
set -eu
N=${1:-1000}
RC=${REALCONDOR:-$(cd "$(dirname "$0")/../../shared/realcondor" && pwd)}
CH=${CHROOT:-/tmp/trixie}
bash "$RC/stop.sh" >/dev/null 2>&1 || true
EXTRA_CONFIG='DAEMON_LIST = MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD
STARTD_JOB_HOOK_KEYWORD =
NEGOTIATOR_INTERVAL = 2
NEGOTIATOR_MIN_INTERVAL = 1
CLAIM_WORKLIFE = 3600
UID_DOMAIN = roost.test
FILESYSTEM_DOMAIN = roost.test' DEBUG=default HOOKLOG=min bash "$RC/setup.sh" >/dev/null
trap 'bash "$RC/stop.sh" >/dev/null 2>&1 || true' EXIT
mkdir -p "$CH/tmp/qb" && chmod 777 "$CH/tmp/qb"
printf 'executable = /bin/true\nshould_transfer_files = NO\nqueue %s\n' "$N" > "$CH/tmp/qb/bench.sub"
# (process names as the kernel keeps them: 15 characters)
pid() { pgrep -x "$1" | while read -r p; do [ "$(readlink "/proc/$p/root")" = "$CH" ] && echo "$p"; done | head -1; }
cpu() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"; }
SCHEDD=$(pid condor_schedd); STARTD=$(pid condor_startd)
NEG=$(pid condor_negotiat); COLL=$(pid condor_collecto)
S0=$(cpu "$SCHEDD"); T0=$(cpu "$STARTD"); G0=$(( $(cpu "$NEG") + $(cpu "$COLL") ))
start=$(date +%s.%N)
chroot "$CH" su roost -s /bin/sh -c 'cd /tmp/qb && condor_submit bench.sub' >/dev/null
until chroot "$CH" condor_q -allusers -totals 2>/dev/null | grep -q 'Total for all users: 0 jobs'; do sleep 0.2; done
end=$(date +%s.%N)
S1=$(cpu "$SCHEDD"); T1=$(cpu "$STARTD"); G1=$(( $(cpu "$NEG") + $(cpu "$COLL") ))
HZ=$(getconf CLK_TCK)
awk -v n="$N" -v a="$start" -v b="$end" -v s0="$S0" -v s1="$S1" -v t0="$T0" -v t1="$T1" -v g0="$G0" -v g1="$G1" -v hz="$HZ" 'BEGIN {
    w = b - a
    printf "HTCondor: %d jobs on 2 slots: %.1f s, %.1f jobs/s\n", n, w, n / w
    printf "schedd with its shadows %.2f ms/job; startd with its starters %.2f ms/job; negotiator and collector %.2f ms/job\n", (s1 - s0) / hz * 1000 / n, (t1 - t0) / hz * 1000 / n, (g1 - g0) / hz * 1000 / n
}'
