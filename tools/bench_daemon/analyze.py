#!/usr/bin/env python3
"""Summarise one benchmark run of tools/bench_daemon/run.sh.

usage: analyze.py throughput DIR N HZ   (DIR: events.tsv, cpu.txt, samples.tsv)
       analyze.py latency DIR          (DIR: events.tsv, drops.txt, starts.txt)
Prints one `key value` per line; times in events.tsv are microseconds."""
import statistics as st
import sys


def events(d):
    for line in open(f"{d}/events.tsv"):
        a = line.split()
        if len(a) >= 3:
            yield a


def throughput(d, n, hz):
    fetched, exits, starter_ns, rejects, replies = {}, {}, [], 0, 0
    for a in events(d):
        t, kind, job = int(a[0]), a[1], a[2]
        if kind == "FETCH" and job != "-":
            fetched[job] = int(a[3])
        elif kind == "EXIT":
            exits[job] = t
            if len(a) > 4 and a[4].isdigit():
                starter_ns.append(int(a[4]))
        elif kind == "REPLY":
            replies += 1
            rejects += a[3] == "reject"
    jobs = [j for j in exits if j in fetched]
    span = (max(exits.values()) - min(fetched.values())) / 1e6
    cpu = open(f"{d}/cpu.txt").read().split()
    # cpu.txt: utime stime schedstat_ns before, then after
    b, a_ = [int(x) for x in cpu[:3]], [int(x) for x in cpu[3:6]]
    ticks = (a_[0] + a_[1]) - (b[0] + b[1])
    sched = (a_[2] - b[2]) / 1e6
    print(f"jobs {len(jobs)} of {n}")
    print(f"span_s {span:.3f}")
    print(f"jobs_per_s {len(jobs) / span:.1f}")
    print(f"replies {replies} rejects {rejects}")
    print(f"daemon_cpu_ms_per_job {sched / len(jobs):.2f} (stat {1000 * ticks / hz / len(jobs):.2f})")
    if starter_ns:
        print(f"starter_cpu_ms_per_job {st.median(starter_ns) / 1e6:.2f}")
    rss = {"daemon": [], "starter": {}}
    uss = {"daemon": [], "starter": {}}
    try:
        for line in open(f"{d}/samples.tsv"):
            _, pid, kind, r, h, u = line.split()
            if kind == "daemon":
                rss["daemon"].append(int(r))
                uss["daemon"].append(int(u))
            else:
                rss["starter"][pid] = max(rss["starter"].get(pid, 0), int(h))
                uss["starter"][pid] = max(uss["starter"].get(pid, 0), int(u))
    except FileNotFoundError:
        pass
    if rss["daemon"]:
        print(f"daemon_rss_mb_max {max(rss['daemon']) / 1024:.1f}")
    if rss["starter"]:
        print(f"starter_peak_rss_mb_median {st.median(rss['starter'].values()) / 1024:.1f} (n {len(rss['starter'])})")
    if uss["daemon"]:
        print(f"daemon_uss_mb_max {max(uss['daemon']) / 1024:.1f}")
    if uss["starter"]:
        print(f"starter_peak_uss_mb_median {st.median(uss['starter'].values()) / 1024:.1f}")


def latency(d):
    drop = dict(l.split() for l in open(f"{d}/drops.txt"))
    start = dict(l.split() for l in open(f"{d}/starts.txt") if len(l.split()) == 2)
    fetch = {}
    for a in events(d):
        if a[1] == "FETCH" and a[2] != "-":
            fetch[a[2]] = (int(a[0]) * 1000, int(a[3]) * 1000)
    rows = []
    for j, dr in drop.items():
        if j in start and j in fetch:
            dr, s = int(dr), int(start[j])
            f0, f1 = fetch[j]
            rows.append(((f0 - dr) / 1e6, (s - f1) / 1e6, (s - dr) / 1e6))
    print(f"samples {len(rows)}")
    if not rows:
        return
    for i, name in enumerate(("drop_to_fetch_ms", "fetch_to_exec_ms", "drop_to_exec_ms")):
        v = sorted(r[i] for r in rows)
        print(f"{name} {st.median(v):.1f} (min {v[0]:.1f} max {v[-1]:.1f})")


if sys.argv[1] == "throughput":
    throughput(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
else:
    latency(sys.argv[2])
