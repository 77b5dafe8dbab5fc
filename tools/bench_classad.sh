#!/usr/bin/env bash
# Runs Roost's ClassAd benchmarks and HTCondor's library on the same inputs,
# one after the other on this machine, and prints the numbers that
# docs/performance.md records.
#
#   tools/bench_classad.sh            # everything (about 5 minutes)
#   QUICK=1 tools/bench_classad.sh    # shorter criterion runs
#
# Needs python3 with venv; HTCondor's bindings are installed into
# target/bench-venv from tools/requirements.txt on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

. tools/bench_common.sh

measure=10
[ "${QUICK:-}" = 1 ] && measure=3

echo "== Roost: criterion (single thread)"
cargo bench --bench classad -- --warm-up-time 2 --measurement-time "$measure" 2>&1 |
    grep -E '^(parse|evaluate|matchmaking|evalInEach)|time:'

echo "== HTCondor's library (classad2), same inputs, batches of 200 and 20000"
"$venv/bin/python" tools/bench_htcondor_classad.py --n 200 --repeat 15
"$venv/bin/python" tools/bench_htcondor_classad.py --n 20000

echo "== allocations"
cargo test --profile ci --test allocations -- --nocapture 2>&1 | grep 'allocations:'

echo "== roost classad match / eval --jsonl on generated inputs"
data=target/bench-data
python3 tools/gen_bench_ads.py "$data" --machines 1000 --jobs 1000 --lines 100000
cargo build --release --quiet
./target/release/roost classad match --machines "$data/machines.ads" --jobs "$data/jobs.ads" --json | tail -1
TIMEFORMAT='eval --jsonl: %R s for 100000 lines'
time ./target/release/roost classad eval --jsonl <"$data/eval.jsonl" >/dev/null
