#!/usr/bin/env bash
# The whole match side by side: `roost classad match` and HTCondor's own
# ClassAd library doing the same work natively (tools/bench_match/
# htcondor_match.cpp: parse every ad, then a negotiator-style loop with the
# symmetric match and the job's Rank), on the same generated ads, one after
# the other, each as a whole process, best of RUNS.
#
#   tools/bench_match.sh [MACHINES] [JOBS]     # default 200 x 2000
#
# HTCondor's side builds and runs in the Debian trixie chroot of
# ../shared/realcondor (HTCondor 23.9.6, libclassad-dev and g++ installed
# into it on first use; CHROOT=/tmp/trixie by default, made by its
# bootstrap.sh). Needs root for chroot.
set -euo pipefail
cd "$(dirname "$0")/.."

machines=${1:-200}
jobs=${2:-2000}
runs=${RUNS:-5}
chroot_dir=${CHROOT:-/tmp/trixie}
data=target/bench-match
mkdir -p "$data"
python3 tools/gen_bench_ads.py "$data" --machines "$machines" --jobs "$jobs" --lines 1 >/dev/null

cargo build --release --quiet
roost=./target/release/roost

best() { sort -n | head -1; }
wall() { # seconds of wall time of one run of "$@"
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}

echo "== roost classad match, $machines machines x $jobs jobs"
$roost classad match --machines "$data/machines.ads" --jobs "$data/jobs.ads" --json | tail -1
t=$(for _ in $(seq "$runs"); do
    wall $roost classad match --machines "$data/machines.ads" --jobs "$data/jobs.ads" --json
done | best)
printf 'roost: %.3f s (best of %s runs)\n' "$t" "$runs"

echo "== HTCondor's libclassad (natively), same ads"
if [ ! -x "$chroot_dir/usr/bin/condor_version" ]; then
    echo "no HTCondor chroot at $chroot_dir: run ../shared/realcondor/bootstrap.sh $chroot_dir" >&2
    exit 1
fi
if [ ! -e "$chroot_dir/usr/include/classad/classad_distribution.h" ] || ! chroot "$chroot_dir" which g++ >/dev/null 2>&1; then
    chroot "$chroot_dir" bash -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libclassad-dev g++ >/dev/null'
fi
mkdir -p "$chroot_dir/tmp/bench-match"
cp tools/bench_match/htcondor_match.cpp "$data/machines.ads" "$data/jobs.ads" "$chroot_dir/tmp/bench-match/"
chroot "$chroot_dir" g++ -O2 -o /tmp/bench-match/htcondor_match /tmp/bench-match/htcondor_match.cpp -lclassad
chroot "$chroot_dir" dpkg-query -W -f='HTCondor (Debian condor) ${Version}\n' condor
chroot "$chroot_dir" /tmp/bench-match/htcondor_match /tmp/bench-match/machines.ads /tmp/bench-match/jobs.ads
t=$(for _ in $(seq "$runs"); do
    wall chroot "$chroot_dir" /tmp/bench-match/htcondor_match /tmp/bench-match/machines.ads /tmp/bench-match/jobs.ads
done | best)
printf 'htcondor: %.3f s (best of %s runs)\n' "$t" "$runs"
