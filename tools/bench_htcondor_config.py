#!/usr/bin/env python3
"""Times HTCondor's configuration reader (htcondor2, HTCondor 23.10) on the
file `cargo bench --bench config` writes: a reload of the whole
configuration, and a reload plus the expansion of every knob the file
defines (the same names Roost expands). Prints one JSON line.

    target/bench-venv/bin/python tools/bench_htcondor_config.py
"""
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONF = os.path.join(ROOT, "target", "bench-data", "condor_config_5000")
NAMES = CONF + ".names"

os.environ["CONDOR_CONFIG"] = CONF
import htcondor2  # noqa: E402  (reads CONDOR_CONFIG on import)

htcondor2.set_subsystem("STARTD")
names = open(NAMES).read().split("\n")


def reload_only():
    htcondor2.reload_config()


def reload_and_expand():
    htcondor2.reload_config()
    total = 0
    for n in names:
        try:
            total += len(str(htcondor2.param[n]))
        except Exception:
            pass
    return total


def best(fn, reps):
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


reps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
print(json.dumps({
    "htcondor": htcondor2.version(),
    "knobs": len(names),
    "reload_ms": best(reload_only, reps) * 1e3,
    "reload_and_expand_ms": best(reload_and_expand, reps) * 1e3,
}))
