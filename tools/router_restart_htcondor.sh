#!/bin/bash
# What HTCondor 23.9.6's condor_job_router does when it is killed while a
# hook runs: one job per hook (TRANSLATE_JOB, UPDATE_JOB_INFO,
# JOB_FINALIZE, JOB_CLEANUP), each hook sleeping 20 s the first time it
# runs; condor_job_router is killed -9 while each sleeps, and the master
# starts it again. Prints, per hook, when each run started and ended and
# where both jobs ended — the facts docs/schedd.md ("Restarts") compares
# Roost's restart with. Needs root (chroot); takes about five minutes.
#
#   tools/router_restart_htcondor.sh    (REALCONDOR: the realcondor dir)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RC=${REALCONDOR:-$(cd "$ROOT/../shared/realcondor" && pwd)}
CH=${CHROOT:-/tmp/trixie}
W=/tmp/rrestart
bash "$RC/stop.sh" >/dev/null 2>&1 || true
pkill -f "$W/hooks/" 2>/dev/null || true
rm -rf "$CH/var/spool/condor/"job_queue.log* "$CH/var/spool/condor/history"*
rm -rf "$CH$W" && mkdir -p "$CH$W/rec" "$CH$W/work" "$CH$W/hooks"
chmod 777 "$CH$W/rec" "$CH$W/work" && chmod 755 "$CH$W" "$CH$W/hooks"
touch "$CH$W/rec/events" && chmod 666 "$CH$W/rec/events"
CONFIG="JOB_ROUTER_ROUTE_NAMES = R
JOB_ROUTER_ROUTE_R @=end
  UNIVERSE vanilla
  REQUIREMENTS WantRoute is true
  SET Requirements true
@end
JOB_ROUTER_POLLING_PERIOD = 2"
for kw in KT KU KF KC; do
    for h in translate update finalize cleanup; do
        case $h in
        translate) ok="sed '1,/^------\$/d' \$f.in" ;;
        update) ok="echo 'HookSawRun = true'" ;;
        finalize) ok="echo 'FinalizedByHook = true'" ;;
        cleanup) ok="exit 0" ;;
        esac
        wait=
        case "$kw.$h" in KT.translate|KU.update|KF.finalize|KC.cleanup)
            wait="if [ ! -e $W/rec/gate.$kw ]; then touch $W/rec/gate.$kw; sleep 20; echo \"\$(date +%s.%N) $kw $h-end-first\" >> $W/rec/events; fi" ;;
        esac
        printf '#!/bin/sh\nf=%s/rec/%s.%s.$$\ncase "$PWD" in */execute*) exit 0;; esac\necho "$(date +%%s.%%N) %s %s" >> %s/rec/events\ncat > $f.in\n%s\n%s\n' \
            "$W" "$kw" "$h" "$kw" "$h" "$W" "$wait" "$ok" > "$CH$W/hooks/$kw.$h"
        chmod 755 "$CH$W/hooks/$kw.$h"
    done
    CONFIG="$CONFIG
${kw}_HOOK_TRANSLATE_JOB = $W/hooks/$kw.translate
${kw}_HOOK_UPDATE_JOB_INFO = $W/hooks/$kw.update
${kw}_HOOK_JOB_FINALIZE = $W/hooks/$kw.finalize
${kw}_HOOK_JOB_CLEANUP = $W/hooks/$kw.cleanup"
    printf 'executable = /bin/sleep\narguments = 2\nrequirements = false\n+WantRoute = true\n+HookKeyword = "%s"\nqueue\n' "$kw" > "$CH$W/work/$kw.sub"
done
EXTRA_CONFIG="DAEMON_LIST = MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD, JOB_ROUTER
STARTD_JOB_HOOK_KEYWORD =
NEGOTIATOR_INTERVAL = 2
NEGOTIATOR_MIN_INTERVAL = 1
MASTER_BACKOFF_CONSTANT = 2
NUM_CPUS = 8
NUM_SLOTS_TYPE_1 = 8
UID_DOMAIN = roost.test
FILESYSTEM_DOMAIN = roost.test
$CONFIG" DEBUG=default HOOKLOG=min bash "$RC/setup.sh" >/dev/null
trap 'bash "$RC/stop.sh" >/dev/null 2>&1 || true; pkill -f "$W/hooks/" 2>/dev/null || true' EXIT
q() { chroot "$CH" "$@"; }
i=0
until q condor_q -totals >/dev/null 2>&1; do
    i=$((i + 1)); [ "$i" -lt 120 ] || { echo "no schedd" >&2; exit 1; }; sleep 0.5
done
sleep 5
start=$(date +%s)
for kw in KT KU KF KC; do
    q su roost -s /bin/sh -c "cd $W/work && condor_submit $kw.sub" >/dev/null
done
router() { for p in $(pgrep -x condor_job_rout || true); do
    [ "$(readlink /proc/$p/root)" = "$(readlink -f "$CH")" ] && echo "$p"; done; true; }
killed=
while [ $(( $(date +%s) - start )) -lt 200 ]; do
    for kw in KT KU KF KC; do
        case " $killed " in *" $kw "*) continue ;; esac
        if [ -e "$CH$W/rec/gate.$kw" ]; then
            sleep 2
            for p in $(router); do kill -9 "$p"; done
            echo "$(date +%s.%N) $kw router-killed" >> "$CH$W/rec/events"
            killed="$killed $kw"
        fi
    done
    sleep 1
done
echo "== hooks (seconds from submit)"
awk -v s="$start" '{printf "%6.1f %s %s\n", $1 - s, $2, $3}' "$CH$W/rec/events" | sort -k2,2 -s
echo "== jobs"
q condor_q -allusers -af:h ClusterId HookKeyword JobStatus Managed RoutedToJobId RoutedFromJobId 2>/dev/null
q condor_history -af:h ClusterId HookKeyword JobStatus Managed FinalizedByHook RemoveReason 2>/dev/null
