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
  fates untold hand-outs accepted (REPLY_FETCH accept) whose job's fate
               was never told (no JOB_EXIT, no EVICT_CLAIM); a REPLY_FETCH
               whose stdin a SIGKILL of the daemon cut short (no token in
               it) names no hand-out and is not counted
  fates twice  hand-outs told JOB_EXIT more than once
  daemon exits the daemon ending on its own (it is started again)
and `roost-log claims --anomalies` (apart from claims lost at a restart
before their job started, which are told EVICT_CLAIM and counted as
lost_at_restart) and `roost-log verify` on the event log.

usage: chaos.py [--jobs N] [--kills K] [--starter-kills S] [--slots M]
                [--seconds A,B] [--seed X] [--bin DIR] [--keep] [--check]
                [--htcondor CHROOT]

--bin: where `roost` and `roost-log` are (default target/ci, else
target/release). --check: exit 1 unless lost, hand-out reruns, double runs,
unanswered, fates twice and daemon exits are 0, reruns are 0 without starter kills, the
audit has no anomaly and verify is clean. Prints a summary and one JSON line.

--htcondor CHROOT: the same run against real HTCondor's condor_startd in the
chroot that ../shared/realcondor sets up (bootstrap.sh, then this tool runs
its setup.sh and stop.sh; needs root and python3 in the chroot). The
"daemon" killed is condor_startd, started again by its condor_master; there
is no event log to audit.
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
    p.add_argument("--htcondor", metavar="CHROOT", default=None)
    p.add_argument("--deadline", type=float, default=None, help="seconds (default: from jobs)")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--check", action="store_true")
    a = p.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    target = HTCondor(a.htcondor) if a.htcondor else Roost(a.bin)
    lo, hi = (float(x) for x in a.seconds.split(","))
    d = target.setup(a.jobs, a.slots, rng, lo, hi)
    deadline = a.deadline or target.settle + 120 + a.jobs * (hi + 1.5) / a.slots
    target.start()
    started = time.monotonic()
    restarts = 0
    starter_kills = 0
    # The kills, spread over the time the jobs take.
    span = max(a.jobs * ((lo + hi) / 2 + 0.3) / a.slots, 1.0)
    plan = sorted(
        [(rng.uniform(0, span), "daemon") for _ in range(a.kills)]
        + [(rng.uniform(0, span), "starter") for _ in range(a.starter_kills)]
    )
    for at, what in plan:
        target.watch(max(at - (time.monotonic() - started), 0))
        if what == "daemon":
            restarts += target.kill_daemon()
        elif target.kill_starter(rng):
            starter_kills += 1
    while len(os.listdir(f"{d}/done")) < a.jobs and time.monotonic() - started < deadline:
        target.watch(0.5)
    elapsed = time.monotonic() - started
    target.stop()
    report = analyse(d, a.jobs)
    report.update(target.audit())
    report.update(
        target=target.name,
        seed=seed,
        jobs=a.jobs,
        slots=a.slots,
        daemon_kills=restarts,
        starter_kills=starter_kills,
        daemon_exits=len(target.exits),
        seconds=round(elapsed, 1),
        dir=d if a.keep else None,
    )
    show(report)
    if not a.keep:
        shutil.rmtree(d, ignore_errors=True)
    if a.check:
        bad = [
            k
            for k in ("lost", "handout_reruns", "double_runs", "unanswered", "fates_untold",
                      "fates_twice", "anomalies", "daemon_exits")
            if report[k]
        ]
        if not report["verify_ok"]:
            bad.append("verify")
        if starter_kills == 0 and report["reruns"]:
            bad.append("reruns")
        if bad:
            sys.exit(f"chaos: FAILED on {', '.join(bad)} (seed {seed}; --keep to look)")


def make_dir(parent, n, slots, rng, lo, hi):
    """The fetcher's directory (queue, ledger, hooks) under `parent`."""
    d = tempfile.mkdtemp(prefix="roost-chaos-", dir=parent)
    os.chmod(d, 0o755)
    for sub in ("queue", "out", "done", "state", "count", "hooks", "log", "execute", "spool"):
        os.makedirs(f"{d}/{sub}", exist_ok=True)
    # Hooks and jobs run as other users (nobody, condor) when the tool runs as root.
    for sub in ("queue", "out", "done", "state", "count"):
        os.chmod(f"{d}/{sub}", 0o777)
    for f in ("lock", "ledger", "runs"):
        open(f"{d}/{f}", "a").close()
        os.chmod(f"{d}/{f}", 0o666)
    for i in range(1, n + 1):
        with open(f"{d}/queue/{i}", "w") as f:
            f.write(f"{rng.uniform(lo, hi):.2f}")
    return d


def write_hooks(d, seen_as, python, hook):
    """Hook programs in DIR/hooks; `seen_as` is DIR where the hooks run."""
    for kind in ("fetch", "reply", "exit", "evict"):
        path = f"{d}/hooks/{kind}"
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\nexec {python} {hook} {seen_as} {kind} "$@"\n')
        os.chmod(path, 0o755)


class Roost:
    """`roost startd`, SIGKILLed and started again at once by this tool."""

    name = "roost"
    settle = 0

    def __init__(self, binary):
        self.binary = binary or next(
            (d for d in (f"{ROOT}/target/ci", f"{ROOT}/target/release")
             if os.path.exists(f"{d}/roost")),
            None,
        )
        if not self.binary:
            sys.exit("chaos: no roost binary (build with cargo build --profile ci, or --bin)")
        self.exits = []
        self.daemon = None

    def setup(self, n, slots, rng, lo, hi):
        d = self.d = make_dir(None, n, slots, rng, lo, hi)
        python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        write_hooks(d, d, python, f"{HERE}/hook.py")
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

    def start(self):
        """Starts the daemon, its stderr appended to DIR/log/stderr."""
        with open(f"{self.d}/log/stderr", "ab") as err:
            self.daemon = subprocess.Popen(
                [f"{self.binary}/roost", "startd", "-f", "--config", f"{self.d}/condor_config"],
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=dict(os.environ, CONDOR_CONFIG=f"{self.d}/condor_config"),
            )

    def watch(self, seconds):
        """Sleeps `seconds`, starting the daemon again (and counting it in
        `exits`) if it ends on its own meanwhile."""
        until = time.monotonic() + seconds
        while True:
            if self.daemon.poll() is not None:
                self.exits.append(self.daemon.returncode)
                with open(f"{self.d}/log/stderr", "a") as err:
                    err.write(f"chaos: the daemon ended on its own: {self.daemon.returncode}\n")
                self.start()
            left = until - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.1))

    def kill_daemon(self):
        self.daemon.kill()
        self.daemon.wait()
        self.start()
        return 1

    def kill_starter(self, rng):
        """SIGKILLs one starter of the daemon's, if any."""
        return kill_one(rng, children(self.daemon.pid, b"starter"))

    def stop(self):
        self.daemon.send_signal(signal.SIGTERM)
        try:
            self.daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            self.daemon.wait()

    def audit(self):
        log = f"{self.d}/spool/roost-events"
        audit = subprocess.run(
            [f"{self.binary}/roost-log", "--log", log, "claims", "--anomalies", "--json"],
            capture_output=True, text=True,
        )
        claims = [json.loads(x) for x in audit.stdout.splitlines() if x.strip()]
        verify = subprocess.run([f"{self.binary}/roost-log", "--log", log, "verify"],
                                capture_output=True, text=True)
        return {
            # A claim lost at a restart before its job started is told
            # EVICT_CLAIM: an anomaly to the audit, expected here.
            "lost_at_restart": sum(1 for c in claims if lost_at_restart(c)),
            "anomalies": sum(1 for c in claims if not lost_at_restart(c)),
            "verify_ok": verify.returncode == 0 and verify.stdout.startswith("ok"),
            "verify": (verify.stdout or verify.stderr).strip().splitlines()[:1],
        }


class HTCondor:
    """HTCondor's condor_startd in the realcondor chroot: SIGKILLed, and
    started again by its condor_master (backoff cut to about a second)."""

    name = "htcondor-23.9.6"
    settle = 30
    kit = os.path.join(os.path.dirname(ROOT), "shared", "realcondor")

    def __init__(self, chroot):
        self.chroot = os.path.realpath(chroot)
        self.exits = []
        if not os.path.exists(f"{self.chroot}/usr/sbin/condor_startd"):
            sys.exit(f"chaos: no HTCondor in {self.chroot} (run {self.kit}/bootstrap.sh)")
        if not os.path.exists(f"{self.chroot}/usr/bin/python3"):
            sys.exit(f"chaos: no python3 in {self.chroot} "
                     f"(chroot {self.chroot} apt-get install -y python3-minimal)")

    def setup(self, n, slots, rng, lo, hi):
        os.makedirs(f"{self.chroot}/srv", exist_ok=True)
        d = self.d = make_dir(f"{self.chroot}/srv", n, slots, rng, lo, hi)
        self.inside = d[len(self.chroot):]
        shutil.copy(f"{HERE}/hook.py", f"{d}/hook.py")
        os.chmod(f"{d}/hook.py", 0o755)
        write_hooks(d, self.inside, "/usr/bin/python3", f"{self.inside}/hook.py")
        with open(f"{d}/owner", "w") as f:
            f.write("roost")
        self.slots = slots
        return d

    def start(self):
        h = f"{self.inside}/hooks"
        extra = f"""NUM_CPUS = {self.slots}
NUM_SLOTS = {self.slots}
NUM_SLOTS_TYPE_1 = {self.slots}
WANT_VACATE = True
MAXJOBRETIREMENTTIME = 3600
ROOST_HOOK_FETCH_WORK = {h}/fetch
ROOST_HOOK_REPLY_FETCH = {h}/reply
ROOST_HOOK_EVICT_CLAIM = {h}/evict
ROOST_HOOK_JOB_EXIT = {h}/exit
MASTER_BACKOFF_CONSTANT = 1
MASTER_BACKOFF_FACTOR = 1.0
MASTER_BACKOFF_CEILING = 2
MASTER_RECOVER_FACTOR = 5
"""
        env = dict(os.environ, CHROOT=self.chroot, SLOTS="static", DEBUG="default",
                   HOOKLOG="min", POLL="1", STARTER_HOOKS="exit", EXTRA_CONFIG=extra)
        with open(f"{self.d}/log/setup", "ab") as out:
            subprocess.run(["bash", f"{self.kit}/stop.sh"], env=env, stdout=out, stderr=out)
            subprocess.run(["bash", f"{self.kit}/setup.sh"], env=env, stdout=out, stderr=out,
                           check=True)

    def startd(self):
        for p in subprocess.run(["pgrep", "-x", "condor_startd"], capture_output=True,
                                text=True).stdout.split():
            try:
                if os.readlink(f"/proc/{p}/root") == self.chroot:
                    return int(p)
            except OSError:
                pass
        return None

    def watch(self, seconds):
        time.sleep(seconds)

    def kill_daemon(self):
        """SIGKILLs condor_startd, waiting first (up to 60 s) for the
        master to have started it again after the last kill."""
        until = time.monotonic() + 60
        while (pid := self.startd()) is None and time.monotonic() < until:
            time.sleep(0.1)
        if pid is None:
            return 0
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return 0
        return 1

    def kill_starter(self, rng):
        pid = self.startd()
        return pid is not None and kill_one(rng, children(pid, b"condor_starter"))

    def stop(self):
        env = dict(os.environ, CHROOT=self.chroot)
        with open(f"{self.d}/log/setup", "ab") as out:
            subprocess.run(["bash", f"{self.kit}/stop.sh"], env=env, stdout=out, stderr=out)
        log = f"{self.chroot}/var/log/condor"
        for name in ("StartLog", "StarterLog.slot1", "MasterLog"):
            if os.path.exists(f"{log}/{name}"):
                shutil.copy(f"{log}/{name}", f"{self.d}/log/{name}")

    def audit(self):
        return {"lost_at_restart": 0, "anomalies": 0, "verify_ok": True, "verify": ["n/a"]}


def children(parent, marker):
    """Pids of `parent`'s children whose command line holds `marker`."""
    out = subprocess.run(["pgrep", "-P", str(parent)], capture_output=True, text=True)
    pids = []
    for p in out.stdout.split():
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if marker in f.read():
                    pids.append(int(p))
        except OSError:
            pass
    return pids


def kill_one(rng, pids):
    if not pids:
        return False
    try:
        os.kill(rng.choice(pids), signal.SIGKILL)
        return True
    except ProcessLookupError:
        return False


def analyse(d, n):
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
        # A REPLY_FETCH whose stdin the daemon's SIGKILL cut short names
        # no hand-out (token "-"): no job's fate is owed to it.
        "fates_untold": sum(
            1
            for t, r in replies.items()
            if t != "-" and "accept" in r and t not in exits and t not in evicts
        ),
        "fates_twice": sum(1 for a in exits.values() if len(a) > 1),
    }


def lost_at_restart(claim):
    """A claim whose only anomaly is its loss at a restart, told EVICT_CLAIM."""
    anomalies = claim.get("anomalies") or []
    return bool(anomalies) and all("lost when the daemon stopped" in str(a) for a in anomalies)


def show(r):
    print(
        f"chaos ({r['target']}): {r['jobs']} jobs on {r['slots']} slots, {r['daemon_kills']} daemon kills, "
        f"{r['starter_kills']} starter kills, {r['seconds']} s (seed {r['seed']})"
    )
    for k in ("done", "lost", "handouts", "reruns", "handout_reruns", "double_runs",
              "unanswered", "evicted_unreplied", "fates_untold", "fates_twice", "lost_at_restart", "anomalies",
              "verify_ok", "daemon_exits"):
        print(f"  {k:15} {r[k]}")
    if r.get("dir"):
        print(f"  kept in {r['dir']}")
    print(json.dumps(r))


if __name__ == "__main__":
    main()
