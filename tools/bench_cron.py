#!/usr/bin/env python3
"""What a startd cron run costs the daemon, beyond the script itself: Roost
(`roost startd`) and HTCondor 23.9.6 (`condor_startd` with its `condor_procd`,
from ../shared/realcondor) in the same run, each idle (no work fetched) for
SECONDS with and without JOBS Periodic cron jobs of period 1 s, each
running `/bin/echo Tick<i> = 1`. Own CPU per run = (daemon CPU with cron - without) /
runs; memory = the daemons' resident set at the end.

    python3 tools/bench_cron.py [--seconds 60] [--jobs 4] [--chroot /tmp/trixie]
                                [--roost target/ci/roost]

Needs root (the chroot). Results go to docs/performance.md by hand.
"""

import argparse
import os
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REALCONDOR = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "realcondor"))
TICKS = os.sysconf("SC_CLK_TCK")

def cron(jobs):
    """`jobs` Periodic jobs of period 1 s, each `/bin/echo Tick<i> = 1`."""
    names = [f"tick{i}" for i in range(jobs)]
    lines = ["STARTD_CRON_JOBLIST = " + " ".join(names)]
    for i, n in enumerate(names):
        up = n.upper()
        lines += [f"STARTD_CRON_{up}_EXECUTABLE = /bin/echo",
                  f"STARTD_CRON_{up}_ARGS = Tick{i} = 1",
                  f"STARTD_CRON_{up}_PERIOD = 1",
                  f"STARTD_CRON_{up}_MODE = Periodic"]
    return "\n".join(lines) + "\n"


def cpu_seconds(pid):
    """utime + stime of `pid` (its reaped children's not counted)."""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / TICKS


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pids_of(name, root=None):
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/comm") as f:
                if f.read().strip() != name:
                    continue
            if root and os.path.realpath(f"/proc/{p}/root") != os.path.realpath(root):
                continue
            out.append(int(p))
        except OSError:
            pass
    return out


def measure(pids, seconds):
    before = sum(cpu_seconds(p) for p in pids)
    time.sleep(seconds)
    after = sum(cpu_seconds(p) for p in pids)
    return after - before, sum(rss_kb(p) for p in pids)


def htcondor(chroot, seconds, cron):
    env = dict(os.environ, CHROOT=chroot, DEBUG="default", HOOKLOG="min", FWD_IDLE="100000",
               EXTRA_CONFIG=cron)
    stop = os.path.join(REALCONDOR, "stop.sh")
    subprocess.run(["bash", stop], env=env, capture_output=True)
    subprocess.run(["bash", os.path.join(REALCONDOR, "setup.sh")], env=env, check=True,
                   capture_output=True)
    try:
        time.sleep(10)  # start-up, the first fetches and updates
        pids = pids_of("condor_startd", chroot) + pids_of("condor_procd", chroot)
        return measure(pids, seconds)
    finally:
        subprocess.run(["bash", stop], env=env, capture_output=True)


def roost(exe, seconds, cron):
    d = tempfile.mkdtemp(prefix="roost-bench-cron-")
    cfg = os.path.join(d, "condor_config")
    with open(cfg, "w") as f:
        f.write(f"LOCAL_DIR = {d}\nLOG = $(LOCAL_DIR)/log\nEXECUTE = $(LOCAL_DIR)/execute\n"
                "SPOOL = $(LOCAL_DIR)/spool\nCONDOR_IDS = 65534.65534\nNUM_CPUS = 2\n"
                "SLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = 2\nRunBenchmarks = False\n"
                "UPDATE_INTERVAL = 5\n" + cron)
    env = dict(os.environ, CONDOR_CONFIG=cfg)
    daemon = subprocess.Popen([exe, "startd", "-f", "--config", cfg], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(3)
        return measure([daemon.pid], seconds)
    finally:
        subprocess.run([exe, "off", "-fast"], env=env, capture_output=True)
        daemon.wait(timeout=30)
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--chroot", default="/tmp/trixie")
    ap.add_argument("--roost", default=os.path.join(HERE, "..", "target", "ci", "roost"))
    a = ap.parse_args()
    exe = os.path.abspath(a.roost)
    runs = a.seconds * a.jobs  # period 1 s
    print(f"{a.seconds} s idle each; with cron: {a.jobs} jobs, {runs} runs of /bin/echo")
    print("daemon     cron  cpu_s   rss_kb")
    results = {}
    for name, fn, arg in [("htcondor", htcondor, a.chroot), ("roost", roost, exe)]:
        for with_cron in (False, True):
            cpu, rss = fn(arg, a.seconds, cron(a.jobs) if with_cron else "")
            results[(name, with_cron)] = (cpu, rss)
            print(f"{name:<10} {'yes' if with_cron else 'no':<5} {cpu:6.2f}  {rss:7d}")
    for name in ("htcondor", "roost"):
        (c0, r0), (c1, r1) = results[(name, False)], results[(name, True)]
        print(f"{name}: {1000 * (c1 - c0) / runs:.2f} ms own CPU per run, "
              f"{r1 - r0:+d} kB resident with the job")


if __name__ == "__main__":
    main()
