#!/usr/bin/env python3
"""Generates inputs for Roost's command-line benchmarks (no dependencies).

    python tools/gen_bench_ads.py DIR [--machines N] [--jobs M] [--lines L]

writes, with a fixed seed so runs are comparable:

* DIR/machines.ads: N slot ads in old syntax, separated by blank lines, as
  `condor_status -long` prints them, with varied memory, cpus, load,
  architecture and a START policy like a site's;
* DIR/jobs.ads: M job ads in the same form, with varied requests,
  requirements and ranks;
* DIR/eval.jsonl: L lines for `roost classad eval --jsonl`, each a policy
  expression evaluated with a slot ad as MY and a job ad as TARGET.
"""

import argparse
import json
import os
import random

ARCHES = ["X86_64", "X86_64", "X86_64", "aarch64"]
OSES = ["LINUX", "LINUX", "LINUX", "WINDOWS"]
OWNERS = ["alice", "bob", "carol", "dave", "erin", "nobody"]


def machine(i, rnd):
    cpus = rnd.choice([1, 2, 4, 8, 16, 32])
    memory = cpus * rnd.choice([1024, 2048, 4096])
    return {
        "Name": '"slot1@node%05d.example.org"' % i,
        "Machine": '"node%05d.example.org"' % i,
        "Arch": '"%s"' % rnd.choice(ARCHES),
        "OpSys": '"%s"' % rnd.choice(OSES),
        "Cpus": str(cpus),
        "Memory": str(memory),
        "Disk": str(rnd.randint(10, 1000) * 1048576),
        "KFlops": str(rnd.randint(500000, 3000000)),
        "LoadAvg": "%.2f" % rnd.random(),
        "CondorLoadAvg": "%.2f" % (rnd.random() / 4),
        "KeyboardIdle": str(rnd.randint(0, 7200)),
        "HasFileTransfer": rnd.choice(["true", "true", "false"]),
        "HasDocker": rnd.choice(["true", "false"]),
        "State": '"Unclaimed"',
        "Activity": '"Idle"',
        "START": "(KeyboardIdle > 15 * 60) && (LoadAvg - CondorLoadAvg <= 0.3) && "
        "(TARGET.RequestMemory <= Memory) && (TARGET.RequestCpus <= Cpus) && "
        '(TARGET.Owner =!= "nobody")',
        "Requirements": "START",
        "Rank": "0.0",
    }


def job(i, rnd):
    owner = rnd.choice(OWNERS)
    reqs = [
        '(TARGET.Arch == "%s")' % rnd.choice(ARCHES[:2] + ["aarch64"]),
        '(TARGET.OpSys == "LINUX")',
        "(TARGET.Disk >= RequestDisk)",
        "(TARGET.Memory >= RequestMemory)",
    ]
    if rnd.random() < 0.3:
        reqs.append("(TARGET.HasDocker)")
    if rnd.random() < 0.5:
        reqs.append("(TARGET.HasFileTransfer)")
    return {
        "GlobalJobId": '"submit.example.org#%d.0#1700000000"' % i,
        "Owner": '"%s"' % owner,
        "ClusterId": str(i),
        "ProcId": "0",
        "JobUniverse": "5",
        "RequestCpus": str(rnd.choice([1, 1, 1, 2, 4])),
        "RequestMemory": str(rnd.choice([512, 1024, 2048, 4096, 8192])),
        "RequestDisk": str(rnd.randint(1, 100) * 10240),
        "Requirements": " && ".join(reqs),
        "Rank": rnd.choice(["TARGET.Memory + TARGET.KFlops / 1000", "TARGET.KFlops", "0"]),
    }


def old_syntax(ad):
    return "".join("%s = %s\n" % kv for kv in ad.items())


def new_syntax(ad):
    return "[ " + "; ".join("%s = %s" % kv for kv in ad.items()) + " ]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--machines", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--lines", type=int, default=100000)
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    rnd = random.Random(20261122)

    machines = [machine(i, rnd) for i in range(args.machines)]
    jobs = [job(i, rnd) for i in range(args.jobs)]
    with open(os.path.join(args.dir, "machines.ads"), "w") as f:
        f.write("\n".join(old_syntax(m) for m in machines))
    with open(os.path.join(args.dir, "jobs.ads"), "w") as f:
        f.write("\n".join(old_syntax(j) for j in jobs))

    exprs = [
        "START",
        "TARGET.Requirements",
        "TARGET.RequestMemory <= Memory && TARGET.RequestCpus <= Cpus",
        'strcat(Name, "/", TARGET.Owner)',
        "ifThenElse(LoadAvg > 0.5, \"busy\", \"idle\")",
        "Memory * 1024 - TARGET.RequestMemory",
    ]
    with open(os.path.join(args.dir, "eval.jsonl"), "w") as f:
        for i in range(args.lines):
            line = {
                "my": new_syntax(machines[i % len(machines)]),
                "target": old_syntax(jobs[(i * 7) % len(jobs)]),
                "expr": exprs[i % len(exprs)],
            }
            f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
