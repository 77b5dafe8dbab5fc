#!/usr/bin/env python3
"""Sample the resident memory of a daemon and its starters from /proc.

usage: sample.py DAEMON_PID STARTER_COMM OUTFILE STOPFILE
Every 20 ms, one line per process: ns pid kind rss_kb vmhwm_kb uss_kb, where
kind is "daemon" for DAEMON_PID and "starter" for its children named
STARTER_COMM, and uss_kb the memory only that process holds (private pages,
from smaps_rollup: what one more such process costs; RSS also counts the
pages of the program and libraries it shares with the others).
Stops when STOPFILE exists."""
import os
import sys
import time

daemon, starter_comm, out, stop = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3], sys.argv[4]


def memory(pid):
    rss = hwm = 0
    with open(f"/proc/{pid}/status", "rb") as s:
        for line in s:
            if line.startswith(b"VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith(b"VmHWM:"):
                hwm = int(line.split()[1])
    uss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as s:
            for line in s:
                if line.startswith((b"Private_Clean:", b"Private_Dirty:")):
                    uss += int(line.split()[1])
    except OSError:
        pass
    return rss, hwm, uss


with open(out, "w") as f:
    while not os.path.exists(stop):
        now = time.time_ns()
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            pid = int(p)
            try:
                if pid == daemon:
                    kind = "daemon"
                else:
                    with open(f"/proc/{p}/stat", "rb") as s:
                        st = s.read()
                    comm = st[st.index(b"(") + 1 : st.rindex(b")")]
                    ppid = int(st.rsplit(b")", 1)[1].split()[1])
                    if ppid != daemon or comm != starter_comm:
                        continue
                    kind = "starter"
                rss, hwm, uss = memory(pid)
                f.write(f"{now} {pid} {kind} {rss} {hwm} {uss}\n")
            except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
                pass
        time.sleep(0.02)
