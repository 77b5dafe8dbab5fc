#!/usr/bin/env python3
"""Measures HTCondor's own ClassAd library on Roost's benchmark inputs.

The inputs are the files in benches/data/ that the criterion benchmark
`cargo bench --bench classad` also reads, so both sides do the same work:

* parse: the 100-character policy expression, timed three ways: N copies
  in one list literal, N copies as the attributes of one ad, and N single
  parses minus the bindings' per-call cost; the fastest is the reference;
* evaluate pair: the machine's START, the job's Requirements and the job's
  Rank, for N pairs in three calls of `evalInEachContext` over pair ads
  (`[<machine attributes>; TARGET = <job ad>]` and the converse), time per
  pair. One call per thousands of evaluations makes the Python bindings'
  own overhead negligible.

Roost's benchmark runs the same `evalInEachContext` formulation as well as
its real match context, so the comparison is like for like.

Run it twice: with a batch that fits in the CPU caches (--n 200) and with
a large one (--n 20000, the default); `tools/bench_classad.sh` does both.

Usage: python tools/bench_htcondor_classad.py [--n N] [--repeat R]
Prints one JSON object: {"htcondor": VERSION, "parse_ns": ..., "pair_ns": ...,
and the individual measurements}.
Needs `pip install -r tools/requirements.txt`.
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("CONDOR_CONFIG", "/dev/null")
import warnings  # noqa: E402

warnings.simplefilter("ignore")
import htcondor2  # noqa: E402,F401  (registers HTCondor's functions and mode)
import classad2  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benches", "data")


def read(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read().strip()


def body(ad_text):
    """The attribute list of a new-syntax ad, without its brackets."""
    t = ad_text.strip()
    assert t.startswith("[") and t.endswith("]"), "benchmark ads are new syntax"
    return t[1:-1].strip().rstrip(";")


def best_of(repeat, fn):
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best = dt if best is None or dt < best else best
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    n = args.n

    policy = read("policy.txt")
    machine = read("machine.ad")
    job = read("job.ad")
    assert len(policy) == 100

    # Parse, three ways.
    text = "{" + ",".join([policy] * n) + "}"
    parse_list = best_of(args.repeat, lambda: classad2.ExprTree(text)) / n
    text = "[" + ";".join("a%d = %s" % (i, policy) for i in range(n)) + "]"
    parse_ad = best_of(args.repeat, lambda: classad2.ClassAd(text)) / n
    single = best_of(args.repeat, lambda: [classad2.ExprTree(policy) for _ in range(n)]) / n
    trivial = best_of(args.repeat, lambda: [classad2.ExprTree("1") for _ in range(n)]) / n
    parse_single = single - trivial

    # Evaluate: pair ads, each side with the other bound to TARGET.
    mpair = "[" + body(machine) + "; TARGET = " + job + "]"
    jpair = "[" + body(job) + "; TARGET = " + machine + "]"
    ctx = classad2.ClassAd(
        "[ M = {" + ",".join([mpair] * n) + "}; J = {" + ",".join([jpair] * n) + "} ]"
    )
    start = classad2.ExprTree("evalInEachContext(START, M)")
    reqs = classad2.ExprTree("evalInEachContext(Requirements, J)")
    rank = classad2.ExprTree("evalInEachContext(Rank, J)")

    # Sanity: the pair matches and the results are what Roost computes.
    s, r, k = start.eval(ctx), reqs.eval(ctx), rank.eval(ctx)
    assert len(s) == n and s[0] is True, s[:1]
    assert r[0] is True and k[0] == 32768 + 2500, (r[:1], k[:1])

    def pairs():
        start.eval(ctx)
        reqs.eval(ctx)
        rank.eval(ctx)

    pair_s = best_of(args.repeat, pairs) / n

    # The real match context, one pair per call: both Requirements
    # (symmetricMatch), minus the per-call cost of the bindings.
    mad, jad = classad2.ClassAd(machine), classad2.ClassAd(job)
    assert mad.symmetricMatch(jad)
    m = n // 10
    sym = best_of(args.repeat, lambda: [mad.symmetricMatch(jad) for _ in range(m)]) / m
    empty = classad2.ClassAd()
    call = best_of(args.repeat, lambda: [empty.symmetricMatch(empty) for _ in range(m)]) / m

    print(
        json.dumps(
            {
                "htcondor": htcondor2.version(),
                "n": n,
                "parse_ns": min(parse_list, parse_ad, parse_single) * 1e9,
                "parse_list_ns": parse_list * 1e9,
                "parse_ad_ns": parse_ad * 1e9,
                "parse_single_ns": parse_single * 1e9,
                "pair_ns": pair_s * 1e9,
                "symmetric_match_ns": (sym - call) * 1e9,
            }
        )
    )


if __name__ == "__main__":
    sys.exit(main())
