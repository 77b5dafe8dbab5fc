#!/usr/bin/env bash
# Installs Roost with tools/install.sh into a temporary prefix and runs the
# installed daemon on the quickstart setup until its three example jobs are
# done: the installed layout (a static starter beside a dynamic daemon when
# the musl target is there) works end to end; then checks the example
# systemd unit with systemd-analyze. CI runs it after the tests.
#
# usage: tools/smoke_install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/roost-smoke.XXXXXX)
# The example jobs run as nobody when we are root: they must reach it.
chmod 755 "$work"
pid=
cleanup() {
    [ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
tools/install.sh "$work/prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
tail -1 "$work/install.log"
"$work/prefix/bin/roost" startd -f --quickstart "$work/qs" >"$work/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
    [ "$(ls "$work/qs/spool/done" 2>/dev/null | wc -l)" -ge 3 ] && break
    sleep 0.1
done
fail() {
    echo "smoke: $*" >&2
    tail -20 "$work/daemon.log" >&2
    exit 1
}
[ "$(ls "$work/qs/spool/done" 2>/dev/null | wc -l)" -ge 3 ] || fail "the example jobs did not finish in 60 s"
grep -q "hello from roost" "$work/qs/output/hello.out" || fail "hello.out is not the job's output"
grep -q "Starter program. path=$work/prefix/bin/roost-starter " "$work/qs/log/StartLog" ||
    fail "the daemon did not use the installed roost-starter"
[ "$(readlink "/proc/$pid/exe")" = "$work/prefix/bin/roost-startd" ] ||
    fail "roost startd did not become the installed roost-startd (it is $(readlink "/proc/$pid/exe"))"
kill -TERM "$pid"
wait "$pid" || fail "the daemon's exit after SIGTERM was not clean"
pid=
echo "smoke: the installed daemon (roost-startd) ran the quickstart's jobs with the installed starter"
# The manual pages and completions are installed and read.
for page in roost roost-status roost-who roost-log roost-log-claims; do
    [ -s "$work/prefix/share/man/man1/$page.1" ] || fail "no manual page $page.1"
done
grep -q '^\.TH roost-status 1' "$work/prefix/share/man/man1/roost-status.1" ||
    fail "roost-status.1 is not a manual page"
bash -c "source '$work/prefix/share/bash-completion/completions/roost' && complete -p roost" >/dev/null ||
    fail "the bash completion of roost does not load"
echo "smoke: manual pages and completions installed"
# The example systemd unit, pointed at the installed programs, reads
# without a complaint (systemd-analyze prints one for each bad line).
if command -v systemd-analyze >/dev/null; then
    sed "s#/usr/local/bin/#$work/prefix/bin/#g" examples/systemd/roost-startd.service \
        >"$work/roost-startd.service"
    said=$(systemd-analyze verify "$work/roost-startd.service" 2>&1) ||
        fail "systemd-analyze verify failed: $said"
    [ -z "$said" ] || fail "examples/systemd/roost-startd.service: $said"
    echo "smoke: examples/systemd/roost-startd.service verifies"
else
    echo "smoke: no systemd-analyze here; the example unit is not checked"
fi
