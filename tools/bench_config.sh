#!/usr/bin/env bash
# Times Roost's configuration loading and HTCondor's reader on the same
# 5,000-line file, one after the other on this machine; docs/performance.md
# records the numbers.
#
#   tools/bench_config.sh
set -euo pipefail
cd "$(dirname "$0")/.."

. tools/bench_common.sh


echo "== Roost: criterion (single thread)"
cargo bench --bench config -- --warm-up-time 2 --measurement-time 10 2>&1 |
    grep -E '^(config|bench config)|time:'

echo "== HTCondor's reader (htcondor2), same file"
"$venv/bin/python" tools/bench_htcondor_config.py 10
