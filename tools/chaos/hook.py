#!/usr/bin/env python3
"""The chaos fetcher's hooks: one program, the hook type as its first argument.

usage: hook.py DIR fetch|reply|exit|evict [HTCondor's hook arguments]

A spool of job files in DIR/queue. FETCH_WORK takes the first one, gives the
hand-out a new token (ChaosToken in the ad), records it in DIR/state/<job>
and prints the ad (Owner from DIR/owner, else nobody). REPLY_FETCH, JOB_EXIT
and EVICT_CLAIM act only on the hand-out whose token is still current, so a
late message about an older hand-out is recognised: reject, evict and any
non-exit JOB_EXIT put the job back in the queue; JOB_EXIT exit marks it done.
Every message is one line of DIR/ledger (time_ns kind arg token job), written
under a lock."""
import fcntl
import os
import re
import sys
import time


def main():
    d, kind, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(os.path.join(d, "lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if kind == "fetch":
            fetch(d)
            return
        ad = sys.stdin.read()
        m = re.search(r'^ChaosToken = "([^"]*)"', ad, re.M)
        token = m.group(1) if m else "-"
        job = token.split(".")[0]
        arg = args[0] if args else "-"
        ledger(d, kind, arg, token, job)
        state = os.path.join(d, "state", job)
        current = read(state)
        if token == "-" or current != token:
            return
        if kind == "exit" and arg == "exit":
            os.replace(os.path.join(d, "out", job), os.path.join(d, "done", job))
            os.remove(state)
        elif (kind == "reply" and arg == "reject") or kind == "evict" or (
            kind == "exit" and arg != "exit"
        ):
            os.replace(os.path.join(d, "out", job), os.path.join(d, "queue", job))
            os.remove(state)


def fetch(d):
    queue = os.path.join(d, "queue")
    jobs = sorted(os.listdir(queue), key=lambda j: int(j))
    if not jobs:
        return
    job = jobs[0]
    n = int(read(os.path.join(d, "count", job)) or "0") + 1
    write(os.path.join(d, "count", job), str(n))
    token = f"{job}.{n}"
    os.replace(os.path.join(queue, job), os.path.join(d, "out", job))
    write(os.path.join(d, "state", job), token)
    seconds = read(os.path.join(d, "out", job))
    owner = read(os.path.join(d, "owner")) or "nobody"
    runs = os.path.join(d, "runs")
    script = (
        f"echo S {job} {token} $(date +%s%N) >> {runs}; sleep {seconds}; "
        f"echo E {job} {token} $(date +%s%N) >> {runs}"
    )
    ledger(d, "fetch", "-", token, job)
    sys.stdout.write(
        f"ClusterId = {job}\nProcId = 0\nOwner = \"{owner}\"\nCmd = \"/bin/sh\"\n"
        f"Arguments = \"-c '{script}'\"\nJobUniverse = 5\n"
        f"ChaosToken = \"{token}\"\n"
    )
    sys.stdout.flush()


def ledger(d, kind, arg, token, job):
    with open(os.path.join(d, "ledger"), "a") as f:
        f.write(f"{time.time_ns()} {kind} {arg} {token} {job}\n")
        f.flush()


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except FileNotFoundError:
        return None


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
