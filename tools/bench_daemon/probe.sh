#!/bin/bash
# Where Roost's daemon spends memory and CPU, on the benchmark's setup
# (2 static slots, the thin hooks of tools/bench_daemon/hooks, /bin/true
# jobs as nobody):
#
#   tools/bench_daemon/probe.sh memory [N=300]   # RSS and its biggest mappings after N jobs
#   tools/bench_daemon/probe.sh threads [N=300]  # CPU and context switches per daemon thread
#   tools/bench_daemon/probe.sh profile [N=300]  # perf record -a -g; report per process and symbol
#
# `threads` and `profile` need perf. Roost is installed as the benchmark
# installs it (tools/install.sh into target/bench-install: the static
# starter where musl is there). Each run uses a fresh directory under /tmp
# and removes it; `profile` keeps its perf.data in target/bench-probe/.
# NO_INSTALL=1 runs what target/bench-install holds: e.g. `roost` and
# `roost-startd` built together with frame pointers (RUSTFLAGS="-C
# force-frame-pointers=yes") and copied there, for whole call stacks.
# Copy both: `roost startd` becomes `roost-startd` only when the two come
# from the same build, and otherwise runs the daemon itself.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tools/bench_daemon
MODE=${1:-memory}
N=${2:-300}
PREFIX=$ROOT/target/bench-install
[ -n "${NO_INSTALL:-}" ] || "$ROOT/tools/install.sh" "$PREFIX" >/dev/null 2>&1 || { echo "install failed: run tools/install.sh" >&2; exit 1; }
ROOST=$PREFIX/bin/roost
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
profile)
    mkdir -p "$ROOT/target/bench-probe"
    DATA=$ROOT/target/bench-probe/perf.data
    FREQ=5000
    perf record -a -g -F "$FREQ" -o "$DATA" >"$b/perf-record.txt" 2>&1 &
    PERF=$!
    sleep 0.5
    ;;
memory) ;;
*)
    echo "usage: $0 memory|threads|profile [N]" >&2
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
elif [ "$MODE" = profile ]; then
    kill -INT "$PERF"
    wait "$PERF"
    roost_stop "$b"
    # CPU per job of each process name (threads by their own names:
    # the daemon's actor thread is roost-startd, its log writer
    # event-log-write, sled's threads sled-io-*; swapper is idle time),
    # then the top symbols (self time) of the daemon and the starter.
    echo "== $N jobs: CPU per job by process name ($FREQ samples/s; profiler overhead included)"
    perf report -i "$DATA" --no-children --sort comm -g none -n --stdio 2>/dev/null |
        awk -v n="$N" -v hz="$FREQ" '/^#/ || NF < 3 {next} {c = $3; for (i = 4; i <= NF; i++) c = c " " $i
            printf "%8.3f ms  %s\n", $2 * 1000 / hz / n, c}' | head -20
    for c in roost-startd roost-starter; do
        echo "== $c: top symbols (self)"
        perf report -i "$DATA" --no-children --comm "$c" --sort dso,sym --stdio -g none 2>/dev/null |
            grep -v '^#' | grep -v '^$' | head -40
    done
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
