#!/bin/sh
# HTCondor's side of the router comparison: a real HTCondor 23.9.6 access
# point and execute node (../shared/realcondor's chroot, with its schedd,
# negotiator and condor_job_router) given the route and the recording
# hooks of tests/it/router_htcondor.rs, one job submitted by an ordinary
# user; when the job has left the queue, the hooks' stdin and both jobs'
# final ads are written to tests/fixtures/router/ for `cargo test` to
# compare Roost with. Needs root (chroot).
#
#   tools/router_htcondor.sh        (REALCONDOR: the realcondor dir)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RC=${REALCONDOR:-$(cd "$ROOT/../shared/realcondor" && pwd)}
CH=${CHROOT:-/tmp/trixie}
OUT="$ROOT/tests/fixtures/router"
W=/tmp/rt
bash "$RC/stop.sh" >/dev/null 2>&1 || true
rm -rf "$CH$W" && mkdir -p "$CH$W/rec" "$CH$W/work" && chmod 777 "$CH$W/rec" "$CH$W/work"
# The hooks: each records its stdin, then answers as in the Roost test.
hook() {
    printf '#!/bin/sh\nf=%s/rec/%s.$$\ncat > $f.tmp\nmv $f.tmp $f\n%s\n' "$W" "$1" "$2" > "$CH$W/$1.sh"
    chmod 755 "$CH$W/$1.sh"
}
hook translate "sed '1,/^------\$/d' \$f
echo 'TranslatedBy = \"hook\"'"
hook update "echo 'HookSawRun = true'"
hook finalize "echo 'FinalizedByHook = true'"
hook cleanup "exit 0"
EXTRA_CONFIG="DAEMON_LIST = MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD, JOB_ROUTER
STARTD_JOB_HOOK_KEYWORD =
NEGOTIATOR_INTERVAL = 2
NEGOTIATOR_MIN_INTERVAL = 1
UID_DOMAIN = roost.test
FILESYSTEM_DOMAIN = roost.test
$(cat "$ROOT/tests/fixtures/router/route.config" | sed "s#@W@#$W#g")" \
    DEBUG=default HOOKLOG=min bash "$RC/setup.sh" >/dev/null
trap 'bash "$RC/stop.sh" >/dev/null 2>&1 || true' EXIT
cp "$ROOT/tests/fixtures/router/routed.sub" "$CH$W/work/routed.sub"
C=$(chroot "$CH" su roost -s /bin/sh -c "cd $W/work && condor_submit routed.sub" | sed -n 's/.*submitted to cluster \([0-9]*\)\./\1/p')
i=0
until chroot "$CH" condor_q -allusers -totals 2>/dev/null | grep -q 'Total for all users: 0 jobs'; do
    i=$((i + 1))
    [ "$i" -lt 600 ] || { echo "the jobs did not leave the queue in 5 minutes" >&2; exit 1; }
    sleep 0.5
done
mkdir -p "$OUT"
for h in translate finalize cleanup update; do
    f=$(ls -tr "$CH$W/rec/" | grep "^$h\." | grep -v tmp | head -1)
    [ -n "$f" ] && cp "$CH$W/rec/$f" "$OUT/htcondor-$h.stdin"
done
chroot "$CH" condor_history -l -constraint "ClusterId == $C || RoutedFromJobId =?= \"$C.0\"" > "$OUT/htcondor-history.ads"
echo "captured: $(ls "$OUT")"
