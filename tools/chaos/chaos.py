#!/usr/bin/env python3
"""Chaos run of `roost startd`: N fetched jobs through spool hooks with a
token per hand-out (tools/chaos/hook.py), while the daemon is SIGKILLed K
times at random moments and started again at once (and, with
--starter-kills, starters are SIGKILLed too). Then it counts what a fetcher
would care about:

  lost         jobs not done when the run ends (none waiting in the queue)
  reruns       job runs beyond the first (a starter kill evicts a job, so
               with --starter-kills some are expected; with daemon kills
               only, none)
  hand-out reruns
               a hand-out (token) whose job started more than once
  double runs  two runs of one job at the same time
  unanswered   hand-outs that got no answer (REPLY_FETCH, EVICT_CLAIM or
               JOB_EXIT); evicted_unreplied counts those answered by
               EVICT_CLAIM alone (a claim lost before its job started)
  fates twice  hand-outs told JOB_EXIT more than once
  daemon exits the daemon ending on its own (it is started again)
and `roost-log claims --anomalies` (apart from claims lost at a restart
before their job started, which are told EVICT_CLAIM and counted as
lost_at_restart) and `roost-log verify` on the event log.

usage: chaos.py [--jobs N] [--kills K] [--starter-kills S] [--slots M]
                [--seconds A,B] [--seed X] [--bin DIR] [--keep] [--check]

--bin: where `roost` and `roost-log` are (default target/ci, else
target/release). --check: exit 1 unless lost, hand-out reruns, double runs,
unanswered, fates twice and daemon exits are 0, reruns are 0 without starter kills, the
audit has no anomaly and verify is clean. Prints a summary and one JSON line.
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--jobs", type=int, default=60)
    p.add_argument("--kills", type=int, default=10)
    p.add_argument("--starter-kills", type=int, default=0)
    p.add_argument("--slots", type=int, default=4)
    p.add_argument("--seconds", default="0.2,1.0", help="job length range")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--bin", default=None)
    p.add_argument("--deadline", type=float, default=None, help="seconds (default: from jobs)")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--check", action="store_true")
    a = p.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    binary = a.bin or next(
        (d for d in (f"{ROOT}/target/ci", f"{ROOT}/target/release") if os.path.exists(f"{d}/roost")),
        None,
    )
    if not binary:
        sys.exit("chaos: no roost binary (build with cargo build --profile ci, or --bin)")
    lo, hi = (float(x) for x in a.seconds.split(","))
    d = setup(a.jobs, a.slots, rng, lo, hi)
    started = time.monotonic()
    deadline = a.deadline or 120 + a.jobs * (hi + 1.5) / a.slots
    daemon = start(binary, d)
    restarts = 0
    starter_kills = 0
    # The kills, spread over the time the jobs take.
    span = max(a.jobs * ((lo + hi) / 2 + 0.3) / a.slots, 1.0)
    plan = sorted(
        [(rng.uniform(0, span), "daemon") for _ in range(a.kills)]
        + [(rng.uniform(0, span), "starter") for _ in range(a.starter_kills)]
    )
    exits = []
    for at, what in plan:
        wait = at - (time.monotonic() - started)
        daemon = wait_watching(daemon, binary, d, max(wait, 0), exits)
        if what == "daemon":
            daemon.kill()
            daemon.wait()
            daemon = start(binary, d)
            restarts += 1
        elif kill_a_starter(rng, daemon.pid):
            starter_kills += 1
    while len(os.listdir(f"{d}/done")) < a.jobs and time.monotonic() - started < deadline:
        daemon = wait_watching(daemon, binary, d, 0.5, exits)
    elapsed = time.monotonic() - started
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(timeout=60)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()
    report = analyse(d, a.jobs, binary)
    report.update(
        seed=seed,
        jobs=a.jobs,
        slots=a.slots,
        daemon_kills=restarts,
        starter_kills=starter_kills,
        daemon_exits=len(exits),
        seconds=round(elapsed, 1),
        dir=d if a.keep else None,
    )
    show(report)
    if not a.keep:
        shutil.rmtree(d, ignore_errors=True)
    if a.check:
        bad = [
            k
            for k in ("lost", "handout_reruns", "double_runs", "unanswered", "fates_twice",
                      "anomalies", "daemon_exits")
            if report[k]
        ]
        if not report["verify_ok"]:
            bad.append("verify")
        if starter_kills == 0 and report["reruns"]:
            bad.append("reruns")
        if bad:
            sys.exit(f"chaos: FAILED on {', '.join(bad)} (seed {seed}; --keep to look)")


def setup(n, slots, rng, lo, hi):
    d = tempfile.mkdtemp(prefix="roost-chaos-")
    os.chmod(d, 0o755)
    for sub in ("queue", "out", "done", "state", "count", "hooks", "log", "execute", "spool"):
        os.makedirs(f"{d}/{sub}", exist_ok=True)
    # Hooks and jobs run as nobody when the tool runs as root.
    for sub in ("queue", "out", "done", "state", "count"):
        os.chmod(f"{d}/{sub}", 0o777)
    for f in ("lock", "ledger", "runs"):
        open(f"{d}/{f}", "a").close()
        os.chmod(f"{d}/{f}", 0o666)
    for i in range(1, n + 1):
        with open(f"{d}/queue/{i}", "w") as f:
            f.write(f"{rng.uniform(lo, hi):.2f}")
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    for kind in ("fetch", "reply", "exit", "evict"):
        path = f"{d}/hooks/{kind}"
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\nexec {python} {HERE}/hook.py {d} {kind} "$@"\n')
        os.chmod(path, 0o755)
    with open(f"{d}/condor_config", "w") as f:
        f.write(
            f"""LOCAL_DIR = {d}
LOG = $(LOCAL_DIR)/log
EXECUTE = $(LOCAL_DIR)/execute
SPOOL = $(LOCAL_DIR)/spool
CONDOR_IDS = 65534.65534
NUM_CPUS = {slots}
SLOT_TYPE_1 = cpus=1
NUM_SLOTS_TYPE_1 = {slots}
START = True
IS_OWNER = False
SUSPEND = False
PREEMPT = False
KILL = False
WANT_SUSPEND = False
WANT_VACATE = True
RunBenchmarks = False
UPDATE_INTERVAL = 5
POLLING_INTERVAL = 1
STARTD_JOB_HOOK_KEYWORD = C
C_HOOK_FETCH_WORK = {d}/hooks/fetch
C_HOOK_REPLY_FETCH = {d}/hooks/reply
C_HOOK_EVICT_CLAIM = {d}/hooks/evict
C_HOOK_JOB_EXIT = {d}/hooks/exit
FetchWorkDelay = ifThenElse(State == "Claimed" && Activity == "Idle", 0, 1)
MAXJOBRETIREMENTTIME = 3600
"""
        )
    return d


def start(binary, d):
    """Starts the daemon, its stderr appended to DIR/log/stderr."""
    with open(f"{d}/log/stderr", "ab") as err:
        return subprocess.Popen(
            [f"{binary}/roost", "startd", "-f", "--config", f"{d}/condor_config"],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=dict(os.environ, CONDOR_CONFIG=f"{d}/condor_config"),
        )


def wait_watching(daemon, binary, d, seconds, exits):
    """Sleeps `seconds`, starting the daemon again (and counting it in
    `exits`) if it ends on its own meanwhile; the daemon running after."""
    until = time.monotonic() + seconds
    while True:
        if daemon.poll() is not None:
            exits.append(daemon.returncode)
            with open(f"{d}/log/stderr", "a") as err:
                err.write(f"chaos: the daemon ended on its own: {daemon.returncode}\n")
            daemon = start(binary, d)
        left = until - time.monotonic()
        if left <= 0:
            return daemon
        time.sleep(min(left, 0.1))


def kill_a_starter(rng, daemon):
    """SIGKILLs one starter of the daemon's, if any."""
    out = subprocess.run(["pgrep", "-P", str(daemon)], capture_output=True, text=True)
    pids = []
    for p in out.stdout.split():
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if b"starter" in f.read():
                    pids.append(int(p))
        except OSError:
            pass
    if not pids:
        return False
    try:
        os.kill(rng.choice(pids), signal.SIGKILL)
        return True
    except ProcessLookupError:
        return False


def analyse(d, n, binary):
    ledger = [line.split() for line in open(f"{d}/ledger") if line.strip()]
    fetched, replies, exits, evicts = {}, {}, {}, set()
    end_of = {}
    for t, kind, arg, token, job in ledger:
        t = int(t)
        if kind == "fetch":
            fetched[token] = job
        elif kind == "reply":
            replies.setdefault(token, []).append(arg)
        elif kind == "exit":
            exits.setdefault(token, []).append(arg)
            end_of.setdefault(token, t)
        elif kind == "evict":
            evicts.add(token)
            end_of.setdefault(token, t)
    runs = {}
    starts, ends = {}, {}
    for line in open(f"{d}/runs"):
        f = line.split()
        if len(f) != 4:
            continue
        what, job, token, t = f[0], f[1], f[2], int(f[3])
        if what == "S":
            starts.setdefault(token, []).append(t)
            runs.setdefault(job, []).append(token)
        else:
            ends[token] = t
    now = time.time_ns()
    intervals = {}
    for token, ts in starts.items():
        job = token.split(".")[0]
        for s in ts:
            intervals.setdefault(job, []).append((s, ends.get(token, end_of.get(token, now))))
    double = 0
    for spans in intervals.values():
        spans.sort()
        for (s1, e1), (s2, _) in zip(spans, spans[1:]):
            if s2 < e1:
                double += 1
    done = len(os.listdir(f"{d}/done"))
    queued = len(os.listdir(f"{d}/queue"))
    log = f"{d}/spool/roost-events"
    audit = subprocess.run(
        [f"{binary}/roost-log", "--log", log, "claims", "--anomalies", "--json"],
        capture_output=True, text=True,
    )
    claims = [json.loads(x) for x in audit.stdout.splitlines() if x.strip()]
    verify = subprocess.run([f"{binary}/roost-log", "--log", log, "verify"],
                            capture_output=True, text=True)
    return {
        "done": done,
        "lost": n - done,
        "queued_at_end": queued,
        "handouts": len(fetched),
        "reruns": sum(len(t) - 1 for t in runs.values()),
        "handout_reruns": sum(1 for ts in starts.values() if len(ts) > 1),
        "double_runs": double,
        "unanswered": sum(
            1 for t in fetched if t not in replies and t not in evicts and t not in exits
        ),
        "evicted_unreplied": sum(1 for t in fetched if t not in replies and t in evicts),
        "fates_twice": sum(1 for a in exits.values() if len(a) > 1),
        # A claim lost at a restart before its job started is told
        # EVICT_CLAIM: an anomaly to the audit, expected here.
        "lost_at_restart": sum(1 for c in claims if lost_at_restart(c)),
        "anomalies": sum(1 for c in claims if not lost_at_restart(c)),
        "verify_ok": verify.returncode == 0 and verify.stdout.startswith("ok"),
        "verify": (verify.stdout or verify.stderr).strip().splitlines()[:1],
    }


def lost_at_restart(claim):
    """A claim whose only anomaly is its loss at a restart, told EVICT_CLAIM."""
    anomalies = claim.get("anomalies") or []
    return bool(anomalies) and all("lost when the daemon stopped" in str(a) for a in anomalies)


def show(r):
    print(
        f"chaos: {r['jobs']} jobs on {r['slots']} slots, {r['daemon_kills']} daemon kills, "
        f"{r['starter_kills']} starter kills, {r['seconds']} s (seed {r['seed']})"
    )
    for k in ("done", "lost", "handouts", "reruns", "handout_reruns", "double_runs",
              "unanswered", "evicted_unreplied", "fates_twice", "lost_at_restart", "anomalies",
              "verify_ok", "daemon_exits"):
        print(f"  {k:15} {r[k]}")
    if r.get("dir"):
        print(f"  kept in {r['dir']}")
    print(json.dumps(r))


if __name__ == "__main__":
    main()
