#!/usr/bin/env python3
"""Generate submit-description fixtures from HTCondor's own submit code.

Usage:  python3 -m venv /tmp/oracle && /tmp/oracle/bin/pip install -r tools/requirements.txt
        TZ=UTC /tmp/oracle/bin/python tools/submit_oracle.py tests/fixtures/submit

For each submit description below, HTCondor's Python bindings (the `htcondor`
module's `Submit.jobs`, which runs condor_submit's own code without a schedd)
turn it into job ads, with cluster 7, QDate 1700000000 and owner "alice".
Writes `cases.jsonl`, one line per case:

  {"name", "submit", "jobs": [{attr: expression, old syntax}, ...]}
  {"name", "submit", "error": message}

The submit runs in a scratch directory whose path is written as ${CWD}; the
machine's name as ${HOST}. Attributes that depend on this machine's files
and build (sizes of the executable, CondorVersion, CondorPlatform) are left
out. `cargo test` checks Roost's submit reader against the file without
Python.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

import htcondor  # the version 1 bindings: Submit.jobs works without a schedd

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/submit"
CLUSTER, QDATE, OWNER = 7, 1700000000, "alice"
DROP = {"CondorVersion", "CondorPlatform", "DiskUsage", "ImageSize", "ExecutableSize"}

CASES = {
    "minimal": "executable = /bin/true\nqueue\n",
    "transfer_no": "executable = /bin/true\nshould_transfer_files = NO\nqueue\n",
    "transfer_false": "executable = /bin/true\nshould_transfer_files = false\nqueue\n",
    "transfer_if_needed": ("executable = /bin/true\nshould_transfer_files = if_needed\n"
                           "when_to_transfer_output = on_exit\nqueue\n"),
    "transfer_bad_value": "executable = /bin/true\nshould_transfer_files = MAYBE\nqueue\n",
    "transfer_no_on_exit": ("executable = /bin/true\nshould_transfer_files = NO\n"
                            "when_to_transfer_output = ON_EXIT\nqueue\n"),
    "transfer_if_needed_or_evict": ("executable = /bin/true\nshould_transfer_files = IF_NEEDED\n"
                                    "when_to_transfer_output = ON_EXIT_OR_EVICT\nqueue\n"),
    "transfer_bad_when": "executable = /bin/true\nwhen_to_transfer_output = garbage\nqueue\n",
    "transfer_yes_lists": ("executable = /bin/true\nshould_transfer_files = YES\n"
                           "transfer_input_files = in.txt, big.bin ,, data, data/, nothere\n"
                           "transfer_output_files = out1, outdir , b c\n"
                           "transfer_output_remaps = \"out1 = /tmp/o1; outdir=od\"\nqueue\n"),
    "transfer_yes_urls": ("executable = /bin/true\nshould_transfer_files = YES\n"
                          "transfer_input_files = HTTP://x/y, File:///a, https://h/p, in.txt\nqueue\n"),
    "transfer_if_needed_url": ("executable = /bin/true\nshould_transfer_files = IF_NEEDED\n"
                               "transfer_input_files = https://h/p\nqueue\n"),
    "transfer_remap_to_url": ("executable = /bin/true\nshould_transfer_files = YES\n"
                              "transfer_output_remaps = \"a = http://x/y\"\nqueue\n"),
    "transfer_or_evict_alone": ("executable = /bin/true\n"
                                "when_to_transfer_output = ON_EXIT_OR_EVICT\nqueue\n"),
    "transfer_yes_or_evict": ("executable = /bin/true\nshould_transfer_files = YES\n"
                              "when_to_transfer_output = on_exit_or_evict\nqueue\n"),
    "transfer_yes_alone": "executable = /bin/true\nshould_transfer_files = true\nqueue\n",
    "transfer_inputs_alone": "executable = /bin/true\ntransfer_input_files = in.txt\nqueue\n",
    "transfer_no_inputs": ("executable = /bin/true\nshould_transfer_files = NO\n"
                           "transfer_input_files = in.txt\nqueue\n"),
    "transfer_no_outputs": ("executable = /bin/true\nshould_transfer_files = NO\n"
                            "transfer_output_files = a\nqueue\n"),
    "transfer_no_remaps": ("executable = /bin/true\nshould_transfer_files = NO\n"
                           "transfer_output_remaps = \"a=b\"\nqueue\n"),
    "transfer_remaps_unquoted": ("executable = /bin/true\nshould_transfer_files = YES\n"
                                 "transfer_output_remaps = a=b\nqueue\n"),
    "transfer_space_is_one_name": ("executable = /bin/true\nshould_transfer_files = YES\n"
                                   "transfer_input_files = in.txt big.bin\nqueue\n"),
    "transfer_size_of_executable": ("executable = big.bin\nshould_transfer_files = YES\n"
                                    "transfer_executable = false\nqueue\n"),
    "transfer_size_of_stdin": ("executable = /bin/true\ninput = big.bin\n"
                               "should_transfer_files = YES\nqueue\n"),
    "transfer_initialdir": ("executable = /bin/true\ninitialdir = data\n"
                            "should_transfer_files = YES\ntransfer_input_files = b1, ../big.bin\nqueue\n"),
    "policy_periodic": ("executable = /bin/true\nperiodic_hold = NumJobStarts > 2\n"
                        "periodic_release = true\nperiodic_remove = JobStatus == 5\nqueue\n"),
    "policy_on_exit": ("executable = /bin/true\non_exit_hold = ExitCode != 0\n"
                       "on_exit_remove = ExitCode == 0\nqueue\n"),
    "policy_max_retries": "executable = /bin/true\nmax_retries = 3\nqueue\n",
    "policy_max_retries_and_remove": ("executable = /bin/true\nmax_retries = 3\n"
                                      "on_exit_remove = ExitCode == 0\nqueue\n"),
    "policy_bad_expression": "executable = /bin/true\nperiodic_hold = (\nqueue\n",
    "getenv_true": "executable = /bin/true\ngetenv = True\nqueue\n",
    "getenv_false": "executable = /bin/true\ngetenv = false\nqueue\n",
    "getenv_names": "executable = /bin/true\ngetenv = PATH, home\nqueue\n",
    "getenv_patterns": "executable = /bin/true\ngetenv = P* Z*, L?NG, NOPE\nqueue\n",
    "getenv_yes_is_a_name": "executable = /bin/true\ngetenv = yes\nqueue\n",
    "accounting_group": ("executable = /bin/true\naccounting_group = physics\n"
                         "accounting_group_user = bob\nqueue\n"),
    "accounting_group_owner": "executable = /bin/true\naccounting_group = physics.hep\nqueue\n",
    "accounting_group_user_only": "executable = /bin/true\naccounting_group_user = bob\nqueue\n",
    "accounting_group_empty": "executable = /bin/true\naccounting_group =\nqueue\n",
    "concurrency_limits": "executable = /bin/true\nconcurrency_limits = DB:2, Sw  ,Tape\nqueue\n",
    "concurrency_limits_one": "executable = /bin/true\nconcurrency_limits = license.matlab\nqueue\n",
    "concurrency_limits_empty": "executable = /bin/true\nconcurrency_limits =\nqueue\n",
    "deferral": "executable = /bin/true\ndeferral_time = 1800000000\nqueue\n",
    "deferral_window": ("executable = /bin/true\ndeferral_time = 1800000000\ndeferral_window = 60\n"
                        "deferral_prep_time = 10\nqueue\n"),
    "deferral_expression": ("executable = /bin/true\nrequirements = Memory > 1\n"
                            "deferral_time = CurrentTime + 5\nqueue\n"),
    "deferral_negative": "executable = /bin/true\ndeferral_time = -5\nqueue\n",
    "streams": "executable = /bin/true\nstream_output = true\nstream_error = false\nqueue\n",
    "streams_no_transfer": ("executable = /bin/true\nshould_transfer_files = NO\n"
                            "stream_output = true\nstream_error = true\nqueue\n"),
    "coresize": "executable = /bin/true\ncoresize = 1000000\nqueue\n",
    "coresize_unlimited": "executable = /bin/true\ncoresize = -1\nqueue\n",
    "coresize_bad": "executable = /bin/true\ncoresize = big\nqueue\n",
    "noop_job": "executable = /bin/true\nnoop_job = true\nqueue\n",
    "noop_job_expr_code": ("executable = /bin/true\nnoop_job = ProcId == 1\n"
                           "noop_job_exit_code = 3\nqueue 2\n"),
    "noop_job_signal": ("executable = /bin/true\nnoop_job = true\n"
                        "noop_job_exit_signal = 9\nqueue\n"),
    "transfer_executable_true": "executable = /bin/true\ntransfer_executable = true\nqueue\n",
    "transfer_executable_f": "executable = /bin/true\ntransfer_executable = f\nqueue\n",
    "transfer_executable_no": "executable = /bin/true\ntransfer_executable = no\nqueue\n",
    "transfer_executable_expression": "executable = /bin/true\ntransfer_executable = x == 1\nqueue\n",
    "streams_numbers": "executable = /bin/true\nstream_output = 2\nstream_error = 0\nqueue\n",
    "streams_yes": "executable = /bin/true\nstream_output = yes\nqueue\n",
    "streams_t": "executable = /bin/true\nstream_error = t\nqueue\n",
    "streams_garbage": "executable = /bin/true\nstream_error = x\nqueue\n",
    "log_xml_true": "executable = /bin/true\nlog = j.log\nlog_xml = true\nqueue\n",
    "log_xml_false": "executable = /bin/true\nlog = j.log\nlog_xml = False\nqueue\n",
    "log_xml_number": "executable = /bin/true\nlog_xml = 2\nqueue\n",
    "log_xml_garbage": "executable = /bin/true\nlog_xml = x\nqueue\n",
    "transfer_executable_false": "executable = /bin/true\ntransfer_executable = false\nqueue\n",
    "transfer_executable_no_transfer": ("executable = /bin/true\nshould_transfer_files = NO\n"
                                        "transfer_executable = False\nqueue\n"),
    "getenv_and_environment": ("executable = /bin/true\nenvironment = \"PATH=/opt A=1\"\n"
                               "getenv = true\nqueue\n"),
    "arguments_old": "executable = /bin/echo\narguments = one two \"three\"\nqueue\n",
    "arguments_new": "executable = /bin/echo\narguments = \"one 'two three' four\"\nqueue\n",
    "environment_old": "executable = /bin/env\nenvironment = A=1;B=two words\nqueue\n",
    "environment_new": "executable = /bin/env\nenvironment = \"A=1 B='two words'\"\nqueue\n",
    "io": ("executable = /bin/cat\ninput = in.txt\noutput = out.$(Cluster).$(Process)\n"
           "error = err.txt\nlog = job.log\nqueue\n"),
    "initialdir": "executable = /bin/true\ninitialdir = sub\noutput = o\nqueue\n",
    "requests": ("executable = /bin/true\nrequest_cpus = 4\nrequest_memory = 2GB\n"
                 "request_disk = 1048576\nqueue\n"),
    "requests_units": ("executable = /bin/true\nrequest_memory = 512M\nrequest_disk = 3G\n"
                       "queue\n"),
    "request_gpus": "executable = /bin/true\nrequest_gpus = 1\nqueue\n",
    "requirements_rank": ("executable = /bin/true\nrequirements = Memory > 1000\n"
                          "rank = Mips\nqueue\n"),
    "custom_attrs": ("executable = /bin/true\n+Project = \"roost\"\n+Weight = 2 * 3\n"
                     "MY.Team = \"infra\"\nqueue\n"),
    "hold": "executable = /bin/true\nhold = true\nqueue\n",
    "queue_n": "executable = /bin/echo\narguments = $(Process) of $(Cluster)\nqueue 3\n",
    "queue_in": "executable = /bin/echo\narguments = $(Item)\nqueue Item in (red, green blue)\n",
    "queue_in_lines": ("executable = /bin/echo\narguments = $(color)\n"
                       "queue color in (\n  red\n  green\n)\n"),
    "queue_from_inline": ("executable = /bin/echo\narguments = $(a) $(b)\n"
                          "queue a, b from (\n  1, x\n  2, y\n)\n"),
    "queue_from_file": ("executable = /bin/echo\narguments = $(x)\nqueue x from items.txt\n"),
    "queue_matching": ("executable = /bin/cat\ninput = $(f)\nqueue f matching files *.dat\n"),
    "queue_n_in": "executable = /bin/echo\narguments = $(Item) $(Step)\nqueue 2 Item in (a, b)\n",
    "macros": ("base = /data\nexecutable = /bin/ls\narguments = $(base)/in\n"
               "output = $(base)/$(Cluster).out\nqueue\n"),
    "continuation": ("executable = /bin/echo\narguments = one \\\n  two\nqueue\n"),
    "comments": ("# a comment\nexecutable = /bin/true # not a comment\n\n  # indented\nqueue\n"),
    "universe_vanilla": "universe = vanilla\nexecutable = /bin/true\nqueue\n",
    "priority_notify": ("executable = /bin/true\npriority = 5\nnotification = never\n"
                        "job_max_vacate_time = 30\nqueue\n"),
    "itemindex": ("executable = /bin/echo\narguments = $(ItemIndex) $(Item)\n"
                  "queue in (p, q)\n"),
    "process_math": ("executable = /bin/echo\narguments = $INT(Process * 10)\nqueue 2\n"),
    "leave_in_queue": ("executable = /bin/true\nleave_in_queue = true\nqueue\n"),
    "bad_request_memory": "executable = /bin/true\nrequest_memory = lots\nqueue\n",
    "bad_queue": "executable = /bin/true\nqueue x y z in\n",
    "no_executable": "arguments = x\nqueue\n",
    "bad_expression": "executable = /bin/true\nrequirements = (Memory > \nqueue\n",
}


def scratch_files(d):
    with open(os.path.join(d, "items.txt"), "w") as f:
        f.write("alpha\nbeta\n")
    for n in ["one.dat", "two.dat"]:
        with open(os.path.join(d, n), "w") as f:
            f.write("x\n")
    with open(os.path.join(d, "in.txt"), "w") as f:
        f.write("input\n")
    os.makedirs(os.path.join(d, "sub"))
    # Sizes for TransferInputSizeMB: 2.5 MiB, and a directory of 1 MiB.
    with open(os.path.join(d, "big.bin"), "wb") as f:
        f.write(b"\0" * (5 << 19))
    os.chmod(os.path.join(d, "big.bin"), 0o755)
    os.makedirs(os.path.join(d, "data"))
    with open(os.path.join(d, "data", "b1"), "wb") as f:
        f.write(b"\0" * (1 << 20))


# The submitter's environment `getenv` cases see (tests/it/submit_oracle.rs
# gives Roost the same).
GETENV_ENVIRON = {"PATH": "/usr/bin:/bin", "HOME": "/home/alice", "LANG": "C",
                  "ZED": "z z", "QUOTE": "it's", "EMPTY": ""}


def run_case(name, text, cwd, host):
    if "getenv" in text:
        for k in list(os.environ):
            del os.environ[k]
        os.environ.update(GETENV_ENVIRON)
    try:
        # Submit.jobs expands the first queue statement only (so every
        # case here has one).
        sub = htcondor.Submit(text)
        ads = list(sub.jobs(clusterid=CLUSTER, qdate=QDATE, owner=OWNER))
    except Exception as e:  # HTCondor refuses the description
        return {"name": name, "submit": text, "error": str(e)}
    jobs = []
    for ad in ads:
        attrs = {}
        for k in sorted(ad.keys()):
            if k in DROP:
                continue
            v = str(ad.lookup(k))
            attrs[k] = v.replace(cwd, "${CWD}").replace(host, "${HOST}")
        jobs.append(attrs)
    return {"name": name, "submit": text, "jobs": jobs}


def run_isolated(name, text, cwd, host):
    """`run_case` in a child process: HTCondor's submit code exits the whole
    process on some errors (a `$INT()` that does not evaluate)."""
    r = subprocess.run([sys.executable, __file__, "--worker", name], cwd=cwd,
                       capture_output=True, text=True,
                       env=dict(os.environ, ROOST_ORACLE_HOST=host))
    if r.returncode == 0 and r.stdout.strip():
        return json.loads(r.stdout)
    last = [line for line in r.stderr.splitlines() if "ERROR" in line]
    why = last[-1].split("ERROR", 1)[1].strip() if last else f"exit {r.returncode}"
    why = why.split(" at line ")[0]
    return {"name": name, "submit": text, "error": why}


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        name = sys.argv[2]
        case = run_case(name, CASES[name], os.getcwd(), os.environ["ROOST_ORACLE_HOST"])
        print(json.dumps(case, sort_keys=True))
        return
    os.makedirs(OUT, exist_ok=True)
    cwd = tempfile.mkdtemp(prefix="roost-submit-oracle-")
    host = socket.getfqdn()
    old = os.getcwd()
    out_path = os.path.abspath(os.path.join(OUT, "cases.jsonl"))
    try:
        os.chdir(cwd)
        scratch_files(cwd)
        with open(out_path, "w") as f:
            for name, text in CASES.items():
                f.write(json.dumps(run_isolated(name, text, cwd, host), sort_keys=True) + "\n")
    finally:
        os.chdir(old)
        shutil.rmtree(cwd, ignore_errors=True)
    print(f"wrote {len(CASES)} cases to {out_path}")


if __name__ == "__main__":
    main()
