#!/usr/bin/env python3
"""Read Roost's job event logs back with HTCondor's own reader.

Usage:  python3 -m venv /tmp/oracle && /tmp/oracle/bin/pip install -r tools/requirements.txt
        ROOST_BLESS=1 cargo test --profile ci userlog     # (re)writes roost.log, roost.xml
        TZ=UTC /tmp/oracle/bin/python tools/userlog_oracle.py tests/fixtures/userlog

Reads DIR/roost.log (text form) and DIR/roost.xml (XML form), which
`tests/it/userlog.rs` writes with Roost's StarterUserLog writer, through
`htcondor2.JobEventLog`, and writes DIR/htcondor-read.json:

  {"text": [EVENT, ...], "xml": [EVENT, ...]}
  EVENT = {"type": N, "cluster": C, "proc": P, "timestamp": EPOCH,
           "attributes": [[NAME, VALUE], ...]}   # in the reader's order

`cargo test` then checks, without Python, that HTCondor read every record
of both forms back to exactly what Roost meant to write. Run with TZ=UTC:
the logs hold local time.
"""

import json
import os
import sys

import htcondor2


def read(path):
    events = []
    for e in htcondor2.JobEventLog(path).events(stop_after=0):
        attrs = []
        for name, value in e.items():
            if isinstance(value, bool) or isinstance(value, (int, float, str)):
                attrs.append([name, value])
            else:
                attrs.append([name, repr(value)])
        events.append({
            "type": int(e.type),
            "cluster": e.cluster,
            "proc": e.proc,
            "timestamp": e.timestamp,
            "attributes": attrs,
        })
    return events


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/userlog"
    if os.environ.get("TZ") != "UTC":
        sys.exit("run with TZ=UTC: the logs hold local time")
    result = {
        "text": read(os.path.join(out, "roost.log")),
        "xml": read(os.path.join(out, "roost.xml")),
    }
    with open(os.path.join(out, "htcondor-read.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"{len(result['text'])} text and {len(result['xml'])} XML events read")


if __name__ == "__main__":
    main()
