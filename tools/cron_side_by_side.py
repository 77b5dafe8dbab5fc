#!/usr/bin/env python3
"""Startd cron side by side: the same STARTD_CRON configuration and scripts on
a real HTCondor 23.9.6 node (../shared/realcondor, in its chroot) and on
`roost startd`; prints each slot's cron attributes from `condor_status -l`
and `roost status -l`, what each script saw (argv, uid, cwd, environment),
and the differences.

    python3 tools/cron_side_by_side.py [--chroot /tmp/trixie] [--roost target/ci/roost]

Needs root (the chroot) and a built `roost`. Writes nothing into the
repository; its findings are in docs/cron.md ("Side by side with HTCondor").
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REALCONDOR = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "realcondor"))

# name -> (knobs beyond EXECUTABLE, script body); $OUT is where a script may
# write what it saw.
JOBS = {
    "envdump": (
        {"MODE": "OneShot", "ARGS": "one two", "ENV": "CRONTEST=yes"},
        '{ echo "argv: $*"; echo "uid: $(id -u)"; echo "cwd: $(pwd)"; env | sort; } > $OUT/env\n'
        "echo 'EnvDumped = true'",
    ),
    "info": (
        {"MODE": "OneShot", "PREFIX": "Node_"},
        "echo 'Runs = 1'\necho '-'\n"
        "echo 'Gpu = \"ok\"'\necho 'SlotId = 2'\necho '- gpu'\n"
        "echo 'Everywhere = \"yes\"'\necho 'SlotMergeConstraint = TARGET.SlotId >= 1'\n"
        "echo '- all update:true'",
    ),
    "plain": (
        {"MODE": "OneShot"},
        "echo 'Gpu2 = \"ok\"'\necho 'SlotId = 2'\necho '- gpu'\n"
        "echo 'Name1 = 1'\necho 'SlotName = \"slot1\"'\necho '- name'\n"
        "echo 'Everywhere2 = \"yes\"'\necho 'SlotMergeConstraint = TARGET.SlotId >= 1'\n"
        "echo '- all'\necho 'Own = 1'",
    ),
    "garbled": (
        {"MODE": "OneShot"},
        "echo 'Good = 1'\necho 'this is not an attribute'\necho 'Bad = ('\n"
        "echo 'AlsoGood = \"x\"'",
    ),
    "failing": ({"MODE": "OneShot"}, "echo 'Failed = true'\nexit 3"),
    "signalled": ({"MODE": "OneShot"}, "echo 'Signalled = true'\nkill -9 $$"),
    # A resource monitor: one ad per device, each for the slot that holds it.
    "monitor": (
        {"MODE": "OneShot", "METRICS": "SUM:SQUIDs, PEAK:SQUIDsMemory"},
        "".join(
            f"echo 'SlotMergeConstraint = StringListMember(\"{d}\", AssignedSQUIDs)'\n"
            f"echo 'UptimeSQUIDsSeconds = {s}'\necho 'UptimeSQUIDsMemoryPeakUsage = {p}'\n"
            f"echo '- {d}'\n"
            for d, s, p in [("SQUID0", 1.5, 51), ("SQUID1", 4, 42)]
        ),
    ),
}

# What both nodes are given besides the cron jobs.
BASE = """NUM_CPUS = 2
SLOT_TYPE_1 = cpus=1
NUM_SLOTS_TYPE_1 = 2
RunBenchmarks = False
"""

# Devices for the resource monitor, on both nodes.
DEVICES = """MACHINE_RESOURCE_SQUIDs = SQUID0, SQUID1
ADVERTISE_CMR_UPTIME_SECONDS = TRUE
"""


def cron_config(script_dir):
    lines = ["STARTD_CRON_JOBLIST = " + " ".join(JOBS)]
    for name, (knobs, _) in JOBS.items():
        up = name.upper()
        lines.append(f"STARTD_CRON_{up}_EXECUTABLE = {script_dir}/{name}")
        for k, v in knobs.items():
            lines.append(f"STARTD_CRON_{up}_{k} = {v}")
    return "\n".join(lines) + "\n"


def write_scripts(where, out):
    os.makedirs(where, exist_ok=True)
    for name, (_, body) in JOBS.items():
        d = os.path.join(out, name)
        path = os.path.join(where, name)
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\nOUT={d}\n{body}\n")
        os.chmod(path, 0o755)


def parse_long(text):
    """Slot ads of `-l` output: a list of {attr: value text}."""
    ads, cur = [], {}
    for line in text.splitlines():
        if not line.strip():
            if cur:
                ads.append(cur)
                cur = {}
            continue
        m = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*)$", line)
        if m:
            cur[m.group(1)] = m.group(2).strip()
    if cur:
        ads.append(cur)
    return sorted(ads, key=lambda a: a.get("Name", ""))


INTEREST = re.compile(
    r"^(EnvDumped|Node_.*|Gpu2|Name1|Everywhere2|Own|Good|AlsoGood|Bad|Failed|Signalled|"
    r"LastUpdate|SlotMergeConstraint|SlotName|.*SQUIDs.*|"
    r"SQUIDs.*Usage)$",
    re.I,
)


def cron_attrs(ad):
    return {k: v for k, v in ad.items() if INTEREST.match(k)}


def run_htcondor(chroot):
    srv = os.path.join(chroot, "srv/roost")
    out = os.path.join(srv, "cronout")
    for name in JOBS:
        os.makedirs(os.path.join(out, name), exist_ok=True)
        os.chmod(os.path.join(out, name), 0o777)
    write_scripts(os.path.join(srv, "cron"), "/srv/roost/cronout")
    env = dict(os.environ, CHROOT=chroot, DEBUG="default", HOOKLOG="min",
               EXTRA_CONFIG=DEVICES + cron_config("/srv/roost/cron"))
    subprocess.run(["bash", os.path.join(REALCONDOR, "stop.sh")], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["bash", os.path.join(REALCONDOR, "setup.sh")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    try:
        ads = wait_for_ads(["chroot", chroot, "condor_status", "-l"], os.environ, 60, 2)
        envs = {n: read(os.path.join(out, n, "env")) for n in ["envdump"]}
        log = read(os.path.join(chroot, "var/log/condor/StartLog"))
        return ads, envs, log
    finally:
        subprocess.run(["bash", os.path.join(REALCONDOR, "stop.sh")], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_for_ads(status, env, seconds, every):
    """The slot ads `status` (a `-l` command) prints, once both slots have
    the cron jobs' ads or after `seconds`."""
    deadline = time.time() + seconds
    ads = []
    while time.time() < deadline:
        r = subprocess.run(status, env=env, capture_output=True, text=True)
        ads = parse_long(r.stdout)
        if len(ads) == 2 and all(
            "EnvDumped" in a and "Node_Runs" in a and "UptimeSQUIDsSeconds" in a for a in ads
        ):
            break
        time.sleep(every)
    return ads


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def run_roost(roost):
    d = tempfile.mkdtemp(prefix="roost-cron-sbs-")
    os.chmod(d, 0o755)
    out = os.path.join(d, "out")
    for name in JOBS:
        os.makedirs(os.path.join(out, name))
        os.chmod(os.path.join(out, name), 0o777)
    write_scripts(os.path.join(d, "cron"), out)
    cfg = os.path.join(d, "condor_config")
    with open(cfg, "w") as f:
        f.write(f"LOCAL_DIR = {d}\nLOG = $(LOCAL_DIR)/log\nEXECUTE = $(LOCAL_DIR)/execute\n"
                f"SPOOL = $(LOCAL_DIR)/spool\nCONDOR_IDS = 65534.65534\n" + BASE + DEVICES
                + cron_config(os.path.join(d, "cron")))
    env = dict(os.environ, CONDOR_CONFIG=cfg)
    daemon = subprocess.Popen([roost, "startd", "-f", "--config", cfg], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ads = wait_for_ads([roost, "status", "-l"], env, 30, 0.5)
        envs = {n: read(os.path.join(out, n, "env")) for n in ["envdump"]}
        log = read(os.path.join(d, "log/StartLog"))
        return ads, envs, log
    finally:
        subprocess.run([roost, "off", "-fast"], env=env, capture_output=True)
        daemon.wait(timeout=30)
        shutil.rmtree(d, ignore_errors=True)


def env_vars(text):
    """The variables a script saw that a daemon set for it (not the
    machine's own)."""
    keep = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("argv:", "uid:", "cwd:")):
            k, _, v = line.partition("=")
            if re.match(r"^(_CONDOR_|CONDOR|STARTD|CRON|HTCONDOR)", k):
                keep[k] = v
        elif line.startswith(("argv:", "uid:", "cwd:")):
            k, _, v = line.partition(":")
            keep[k] = v.strip()
    return keep


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chroot", default="/tmp/trixie")
    ap.add_argument("--roost", default=os.path.join(HERE, "..", "target", "ci", "roost"))
    a = ap.parse_args()
    h_ads, h_env, h_log = run_htcondor(a.chroot)
    r_ads, r_env, _ = run_roost(os.path.abspath(a.roost))
    print("== cron attributes per slot (HTCondor | Roost)")
    for i, (h, r) in enumerate(zip(h_ads, r_ads)):
        hc, rc = cron_attrs(h), cron_attrs(r)
        print(f"-- slot{i + 1}")
        for k in sorted(set(hc) | set(rc), key=str.lower):
            hv, rv = hc.get(k, "<absent>"), rc.get(k, "<absent>")
            mark = "  " if hv == rv or k.lower().endswith("lastupdate") else "!!"
            print(f"{mark} {k}: {hv} | {rv}")
    print("== what envdump saw (HTCondor | Roost)")
    he, re_ = env_vars(h_env.get("envdump", "")), env_vars(r_env.get("envdump", ""))
    for k in sorted(set(he) | set(re_)):
        hv, rv = he.get(k, "<absent>"), re_.get(k, "<absent>")
        mark = "  " if hv == rv else "!!"
        print(f"{mark} {k}: {hv} | {rv}")
    print("== HTCondor's StartLog lines about cron")
    for line in h_log.splitlines():
        if re.search(r"cron|Cron|CRON", line):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
