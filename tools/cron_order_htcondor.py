#!/usr/bin/env python3
"""HTCondor's side of the cron merge order: the jobs and configuration in
tests/fixtures/cron/order/ (startd cron jobs printing tagged and untagged
ads, with and without a prefix, publishing in another order than their job
list; schedd cron jobs likewise) on a real HTCondor 23.9.6 node
(../shared/realcondor's chroot, a schedd added), and what both slot ads and
the schedd's ad then hold of them, written to
tests/fixtures/cron/order/htcondor.txt for tests/it/cron_order.rs to compare
Roost with. Needs root (the chroot); takes about a minute.

    python3 tools/cron_order_htcondor.py [--chroot /tmp/trixie]

The file's lines: `<slotN|schedd> <Attr> = <value>` for every attribute named
`Ord*`, `P_Ord*` or `P_SlotId`, sorted.
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

from cron_side_by_side import REALCONDOR, parse_long

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "tests", "fixtures", "cron", "order")
WHERE = "/srv/cronorder"

# What must be in the ads before they are read: every job's last ad.
SLOT_NEEDS = ["OrdShared", "OrdFirstOwn", "OrdSecondOwn", "P_OrdValue", "OrdTwiceB"]
SCHEDD_NEEDS = ["OrdSFirstB", "OrdSSecond"]


def wanted(attr):
    return attr.startswith(("Ord", "P_Ord")) or attr == "P_SlotId"


def lines(slots, schedd):
    """The fixture's lines for `slots` (parsed slot ads) and `schedd`."""
    out = []
    for ad in slots:
        who = ad.get("Name", "?").strip('"').split("@")[0]
        out += [f"{who} {k} = {v}" for k, v in ad.items() if wanted(k)]
    out += [f"schedd {k} = {v}" for k, v in schedd.items() if wanted(k)]
    return sorted(out, key=lambda s: s.lower())


def config():
    text = ""
    for f in ["startd.config", "schedd.config"]:
        with open(os.path.join(FIXTURE, f)) as c:
            text += c.read().replace("@DIR@", WHERE)
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chroot", default="/tmp/trixie")
    a = ap.parse_args()
    ch = a.chroot
    jobs = os.path.join(ch, WHERE.lstrip("/"))
    shutil.rmtree(jobs, ignore_errors=True)
    shutil.copytree(os.path.join(FIXTURE, "jobs"), jobs)
    os.chmod(jobs, 0o755)
    extra = ("DAEMON_LIST = MASTER, COLLECTOR, SCHEDD, STARTD\nSCHEDD_INTERVAL = 5\n"
             + config())
    env = dict(os.environ, CHROOT=ch, DEBUG="default", HOOKLOG="min", EXTRA_CONFIG=extra)
    stop = ["bash", os.path.join(REALCONDOR, "stop.sh")]
    subprocess.run(stop, env=env, capture_output=True)
    subprocess.run(["bash", os.path.join(REALCONDOR, "setup.sh")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    try:
        deadline = time.time() + 90
        while True:
            slots = parse_long(subprocess.run(
                ["chroot", ch, "condor_status", "-l"], capture_output=True, text=True).stdout)
            scheds = parse_long(subprocess.run(
                ["chroot", ch, "condor_status", "-schedd", "-l"],
                capture_output=True, text=True).stdout)
            done = (len(slots) == 2 and all(n in s for s in slots for n in SLOT_NEEDS)
                    and len(scheds) == 1 and all(n in scheds[0] for n in SCHEDD_NEEDS))
            if done:
                break
            if time.time() > deadline:
                print("the ads never had every job's attributes", file=sys.stderr)
                return 1
            time.sleep(2)
        # One more update of each ad, so no job's ad is still on its way.
        time.sleep(6)
        slots = parse_long(subprocess.run(
            ["chroot", ch, "condor_status", "-l"], capture_output=True, text=True).stdout)
        scheds = parse_long(subprocess.run(
            ["chroot", ch, "condor_status", "-schedd", "-l"],
            capture_output=True, text=True).stdout)
    finally:
        subprocess.run(stop, env=env, capture_output=True)
    out = os.path.join(FIXTURE, "htcondor.txt")
    with open(out, "w") as f:
        f.write("\n".join(lines(slots, scheds[0])) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
