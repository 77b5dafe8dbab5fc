#!/bin/bash
# HTCondor's side of the router's failure cases: every case of
# tests/fixtures/router/cases/cases.txt (a hook failing, printing garbage
# or nothing, hanging; the source or the routed copy removed or held while
# it runs) on a real HTCondor 23.9.6 access point with condor_job_router
# and a startd (../shared/realcondor's chroot), all cases at once, each
# job with its own hook keyword. When each hook ran, the jobs' final ads
# and the sources' user logs are written to
# tests/fixtures/router/cases/htcondor/ for tests/it/router_cases.rs to
# compare Roost with. Needs root (chroot); takes about four minutes.
#
#   tools/router_cases_htcondor.sh     (REALCONDOR: the realcondor dir)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RC=${REALCONDOR:-$(cd "$ROOT/../shared/realcondor" && pwd)}
CH=${CHROOT:-/tmp/trixie}
CASES="$ROOT/tests/fixtures/router/cases/cases.txt"
OUT="$ROOT/tests/fixtures/router/cases/htcondor"
OBSERVE=${OBSERVE:-150}
POLL=${POLL:-2}
W=/tmp/rcases
bash "$RC/stop.sh" >/dev/null 2>&1 || true
pkill -f "$W/hooks/" 2>/dev/null || true
# A fresh queue: no job of an earlier run may use these keywords.
rm -rf "$CH/var/spool/condor/"job_queue.log* "$CH/var/spool/condor/history"*
rm -rf "$CH$W" && mkdir -p "$CH$W/rec" "$CH$W/work" "$CH$W/hooks"
chmod 777 "$CH$W/rec" "$CH$W/work"
touch "$CH$W/rec/events" && chmod 666 "$CH$W/rec/events"
chmod 755 "$CH$W" "$CH$W/hooks"

# One hook script per case and hook, written by the same rules as the
# Roost test's: record the start and stdin, then answer as the mode says.
answer() { # hook mode
    case "$2" in
    ok) case "$1" in
        translate) echo "sed '1,/^------\$/d' \$f.in; echo 'TranslatedBy = \"hook\"'" ;;
        update) echo "echo 'HookSawRun = true'" ;;
        finalize) echo "echo 'FinalizedByHook = true'" ;;
        cleanup) echo "exit 0" ;;
        esac ;;
    fail) echo "exit 1" ;;
    garbage) echo "echo 'this is not a ClassAd @@'" ;;
    empty) echo "exit 0" ;;
    hang) echo "sleep 3600" ;;
    esac
}
CONFIG="JOB_ROUTER_ROUTE_NAMES = Cases
JOB_ROUTER_ROUTE_Cases @=end
  UNIVERSE vanilla
  REQUIREMENTS WantRoute is true
  MaxIdleJobs = 100
  SET Requirements true
@end
JOB_ROUTER_POLLING_PERIOD = $POLL"
KWS=
while read -r kw tr up fi cl secs action; do
    case "$kw" in ''|'#'*) continue ;; esac
    KWS="$KWS $kw"
    for h in translate update finalize cleanup; do
        case $h in translate) m=$tr ;; update) m=$up ;; finalize) m=$fi ;; cleanup) m=$cl ;; esac
        # A starter runs <KW>_HOOK_UPDATE_JOB_INFO too (the same knob), in
        # the job's sandbox under EXECUTE: its runs are told apart.
        printf '#!/bin/sh\nf=%s/rec/%s.%s.$$\ncase "$PWD" in */execute*) by=starter-;; *) by=;; esac\necho "$(date +%%s.%%N) %s ${by}%s" >> %s/rec/events\ncat > $f.in\n%s\n' \
            "$W" "$kw" "$h" "$kw" "$h" "$W" "$(answer $h "$m")" > "$CH$W/hooks/$kw.$h"
        chmod 755 "$CH$W/hooks/$kw.$h"
    done
    CONFIG="$CONFIG
${kw}_HOOK_TRANSLATE_JOB = $W/hooks/$kw.translate
${kw}_HOOK_UPDATE_JOB_INFO = $W/hooks/$kw.update
${kw}_HOOK_JOB_FINALIZE = $W/hooks/$kw.finalize
${kw}_HOOK_JOB_CLEANUP = $W/hooks/$kw.cleanup"
    printf 'executable = /bin/sleep\narguments = %s\nrequirements = false\n+WantRoute = true\n+HookKeyword = "%s"\nlog = %s.log\nqueue\n' \
        "$secs" "$kw" "$kw" > "$CH$W/work/$kw.sub"
done < "$CASES"

EXTRA_CONFIG="DAEMON_LIST = MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD, JOB_ROUTER
STARTD_JOB_HOOK_KEYWORD =
NEGOTIATOR_INTERVAL = 2
NEGOTIATOR_MIN_INTERVAL = 1
NUM_CPUS = 20
NUM_SLOTS_TYPE_1 = 20
UID_DOMAIN = roost.test
FILESYSTEM_DOMAIN = roost.test
$CONFIG" DEBUG=default HOOKLOG=min bash "$RC/setup.sh" >/dev/null
cleanup() {
    bash "$RC/stop.sh" >/dev/null 2>&1 || true
    pkill -f "$W/hooks/" 2>/dev/null || true
}
trap cleanup EXIT
q() { chroot "$CH" "$@"; }
# Wait for the schedd and the router before submitting.
i=0
until q condor_q -totals >/dev/null 2>&1; do
    i=$((i + 1)); [ "$i" -lt 120 ] || { echo "no schedd" >&2; exit 1; }; sleep 0.5
done
sleep 5
start=$(date +%s)
for kw in $KWS; do
    c=$(q su roost -s /bin/sh -c "cd $W/work && condor_submit $kw.sub" | sed -n 's/.*submitted to cluster \([0-9]*\)\./\1/p')
    echo "$(date +%s.%N) $kw submit $c" >> "$CH$W/rec/events"
done
# The actions, each once its routed copy runs.
pending=$(awk '$7 != "-" && $1 !~ /^#/ && NF == 7 {print $1 ":" $7}' "$CASES")
while [ $(( $(date +%s) - start )) -lt "$OBSERVE" ]; do
    left=
    for p in $pending; do
        kw=${p%%:*}; action=${p#*:}
        src=$(awk -v k="$kw" '$2 == k && $3 == "submit" {print $4}' "$CH$W/rec/events")
        copy=$(q condor_q -allusers -constraint "RoutedFromJobId == \"$src.0\" && JobStatus == 2" -af ClusterId 2>/dev/null | head -1)
        if [ -z "$copy" ]; then left="$left $p"; continue; fi
        case $action in
        rm-source) q condor_rm "$src.0" >/dev/null ;;
        rm-copy) q condor_rm "$copy.0" >/dev/null ;;
        hold-source) q condor_hold "$src.0" >/dev/null ;;
        hold-copy) q condor_hold "$copy.0" >/dev/null ;;
        esac
        echo "$(date +%s.%N) $kw $action $copy" >> "$CH$W/rec/events"
    done
    pending=$left
    sleep 1
done
rm -rf "$OUT" && mkdir -p "$OUT"
q condor_q -allusers -l > "$OUT/queue.ads"
q condor_history -l > "$OUT/history.ads"
bash "$RC/stop.sh" >/dev/null 2>&1 || true
pkill -f "$W/hooks/" 2>/dev/null || true
echo "start $start poll $POLL observe $OBSERVE" > "$OUT/run"
cp "$CH$W/rec/events" "$OUT/events"
for kw in $KWS; do
    # The source's user log (what the schedd and the router wrote of it).
    if [ -f "$CH$W/work/$kw.log" ]; then cp "$CH$W/work/$kw.log" "$OUT/$kw.log"; fi
done
echo "captured $(ls "$OUT" | wc -l) files in $OUT"
