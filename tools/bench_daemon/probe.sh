#!/bin/bash
# Where Roost's daemon spends memory and CPU, on the benchmark's setup
# (2 static slots, the thin hooks of tools/bench_daemon/hooks, /bin/true
# jobs as nobody):
#
#   tools/bench_daemon/probe.sh memory [N=300]   # RSS and its biggest mappings after N jobs
#   tools/bench_daemon/probe.sh threads [N=300]  # CPU and context switches per daemon thread
#
# `threads` needs perf (perf stat --per-thread). Each run uses a fresh
# directory under /tmp and removes it.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tools/bench_daemon
MODE=${1:-memory}
N=${2:-300}
ROOST=$ROOT/target/release/roost
(cd "$ROOT" && cargo build --release --quiet) || exit 1
# The benchmark's own helpers: directories, job ads, configuration, start.
eval "$(sed -n '/^prepare_base()/,/^}/p;/^stage_jobs()/,/^}/p;/^roost_config()/,/^}/p;/^roost_start()/,/^}/p;/^wait_done()/,/^}/p;/^roost_stop()/,/^}/p' "$HERE/run.sh")"

b=$(mktemp -d /tmp/roost-probe.XXXXXX)
trap 'rm -rf "$b"' EXIT
prepare_base "$b"
roost_start "$b" static
stage_jobs "$b" nobody "$b/jobs"
case $MODE in
threads)
    perf stat -e task-clock,context-switches --no-inherit --per-thread -p "$RPID" -o "$b/perf.txt" &
    PERF=$!
    sleep 0.5
    ;;
memory) ;;
*)
    echo "usage: $0 memory|threads [N]" >&2
    roost_stop "$b"
    exit 2
    ;;
esac
mv "$b"/stage/*.job "$b/spool/"
wait_done "$b/done" "$N"
sleep 1
if [ "$MODE" = memory ]; then
    echo "== after $N jobs: the daemon (pid $RPID)"
    grep -E '^(Rss|Pss_Anon|Pss_File|Anonymous):' "/proc/$RPID/smaps_rollup"
    echo "== mappings of more than 60 kB resident (anonymous ones have no name)"
    awk '/^[0-9a-f]+-/ {name = $6; range = $1} /^Size:/ {size = $2} /^Rss:/ {if ($2 > 60) print $2 " kB of " size " kB", range, name}' \
        "/proc/$RPID/smaps" | sort -rn
    echo "== threads: $(ls /proc/$RPID/task | wc -l): $(cat /proc/$RPID/task/*/comm | sort | uniq -c | tr -s " \n" " ")"
    echo "== event log on disk: $(du -sh "$b/node/spool/roost-events" | cut -f1)"
    roost_stop "$b"
else
    roost_stop "$b"
    wait "$PERF"
    echo "== $N jobs: per daemon thread (threads of one name summed)"
    awk '/task-clock|context-switches/ {
            n = split($1, a, "-"); t = a[1]; for (i = 2; i < n; i++) t = t "-" a[i]
            if ($0 ~ /task-clock/) cpu[t] += $2; else cs[t] += $2
        }
        END { for (t in cpu) printf "%-20s %8.1f ms CPU %8d context switches\n", t, cpu[t], cs[t] }' \
        "$b/perf.txt" | sort -k2 -rn
fi
