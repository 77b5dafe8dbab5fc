# Sourced by the tools/bench_*.sh drivers (from the repository root):
# makes target/bench-venv with HTCondor's bindings (tools/requirements.txt)
# on first use, sets $venv, and prints the machine the numbers come from.
venv=target/bench-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet -r tools/requirements.txt
fi

echo "== machine"
nproc
grep -m1 'model name' /proc/cpuinfo || true
date -u +%Y-%m-%dT%H:%MZ
