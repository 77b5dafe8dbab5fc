#!/usr/bin/env bash
# Times Roost's configuration loading and HTCondor's reader on the same
# 5,000-line file, one after the other on this machine; docs/performance.md
# records the numbers.
#
#   tools/bench_config.sh
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/bench-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet -r tools/requirements.txt
fi

echo "== machine"
nproc
grep -m1 'model name' /proc/cpuinfo || true
date -u +%Y-%m-%dT%H:%MZ

echo "== Roost: criterion (single thread)"
cargo bench --bench config -- --warm-up-time 2 --measurement-time 10 2>&1 |
    grep -E '^(config|bench config)|time:'

echo "== HTCondor's reader (htcondor2), same file"
"$venv/bin/python" tools/bench_htcondor_config.py 10
