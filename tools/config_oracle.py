#!/usr/bin/env python3
"""Generates tests/fixtures/config/cases-<MAJOR>.jsonl: configuration files
and the values HTCondor's own reader (the `htcondor2` module) gives for them,
once per HTCondor release Roost's reader can behave as (23.10 and 25.14).
`cargo test` checks Roost against the files without Python.

    python3 -m venv /tmp/v23 && /tmp/v23/bin/pip install -r tools/requirements.txt
    python3 -m venv /tmp/v25 && /tmp/v25/bin/pip install -r tools/requirements-25.txt
    python3 tools/config_oracle.py /tmp/v23/bin/python
    python3 tools/config_oracle.py /tmp/v25/bin/python [--only NAME...]

The release is the one installed in the Python given; the cases and the
template list (from src/config/param_table_<MAJOR>.txt) follow it.

Each case is written to a fresh directory (root file `condor_config`, plus any
included files) and read by a fresh Python process with `CONDOR_CONFIG`
pointing at it and a clean environment. Knobs are read through probe knobs
given as environment overrides (`_CONDOR_ROOST_PROBE_3 = $(NAME)`), so the
answer is the expanded text `condor_config_val` would print, never a typed or
evaluated value. Paths under the case directory are recorded as `{ROOT}`.

A case line: {"name", "files": {path: text}, "env": {var: value},
"subsystem", "probes": [names], and either "expected": {name: text | null |
{"error": reason}} or "load_error": HTCondor's message}. A probe that makes
HTCondor hang (a circular reference) is recorded as {"error": "hang"}.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "config", "cases-%d.jsonl")
SPEC = os.path.join(ROOT, "..", "shared", "spec")
TABLE = os.path.join(ROOT, "src", "config", "param_table_%d.txt")

CHILD = r"""
import json, os, sys
req = json.loads(sys.argv[1])
import htcondor2
if req["subsystem"] != "TOOL":
    htcondor2.set_subsystem(req["subsystem"])
    htcondor2.reload_config()
out = {}
for i, name in enumerate(req["probes"]):
    if i < req.get("skip", 0):
        continue
    try:
        v = htcondor2.param["ROOST_PROBE_%d" % i]
    except KeyError:
        v = None
    except Exception as e:
        v = {"error": str(e)}
    out[name] = v
    sys.stdout.write(json.dumps([name, v]) + "\n")
    sys.stdout.flush()
"""


def run_case(py, case):
    with tempfile.TemporaryDirectory(prefix="roostcfg") as d:
        d = os.path.realpath(d)
        for path, text in case["files"].items():
            full = os.path.join(d, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text.replace("{ROOT}", d))
            if path.endswith(".sh"):
                os.chmod(full, 0o755)
        probes = case["probes"]
        env = {"PATH": "/usr/bin:/bin", "HOME": d,
               "CONDOR_CONFIG": os.path.join(d, "condor_config")}
        for k, v in case.get("env", {}).items():
            env[k] = v.replace("{ROOT}", d)
        for i, name in enumerate(probes):
            env["_CONDOR_ROOST_PROBE_%d" % i] = "$(%s)" % name
        req = {"subsystem": case.get("subsystem", "TOOL"), "probes": [], "skip": 0}
        try:
            p = subprocess.run([py, "-c", CHILD, json.dumps(req)], env=env, cwd=d,
                               capture_output=True, text=True, timeout=20)
            if p.returncode != 0:
                case["load_error"] = " ".join(p.stderr.replace(d, "{ROOT}").split())[-500:] or "exit %d" % p.returncode
                return case
        except subprocess.TimeoutExpired:
            case["load_error"] = "hang"
            return case
        expected = {}
        skip = 0
        while skip < len(probes):
            req = {"subsystem": case.get("subsystem", "TOOL"), "probes": probes, "skip": skip}
            try:
                p = subprocess.run([py, "-c", CHILD, json.dumps(req)], env=env, cwd=d,
                                   capture_output=True, text=True, timeout=20)
                lines, err, rc = p.stdout, p.stderr, p.returncode
            except subprocess.TimeoutExpired as t:
                out = t.stdout or ""
                lines = out.decode() if isinstance(out, bytes) else out
                err, rc = "timeout", None
            got = [json.loads(l) for l in lines.splitlines() if l.startswith("[")]
            for name, v in got:
                expected[name] = v
            if rc == 0:
                break
            # the probe after the last answered one failed (hang or abort)
            skip += len(got)
            if skip < len(probes):
                expected[probes[skip]] = {"error": "hang" if rc is None else (" ".join(err.split())[-300:] or "abort")}
                skip += 1
        def clean(v):
            if isinstance(v, str):
                v = v.replace(d, "{ROOT}")
                return v if v != "" else None
            return v
        case["expected"] = {k: clean(v) for k, v in expected.items()}
        return case


# Macros HTCondor defines from the machine it runs on. The Rust tests take
# their values from the "machine-facts" case, so knobs built from them
# compare equal on any machine.
MACHINE_FACTS = ["HOSTNAME", "FULL_HOSTNAME", "IP_ADDRESS", "IPV4_ADDRESS", "IPV6_ADDRESS",
                 "IP_ADDRESS_IS_IPV6", "USERNAME", "REAL_UID", "REAL_GID", "TILDE", "DETECTED_CPUS",
                 "DETECTED_CORES", "DETECTED_PHYSICAL_CPUS", "DETECTED_MEMORY", "DETECTED_CPUS_LIMIT",
                 "ARCH", "OPSYS", "OPSYSVER", "OPSYSANDVER", "OPSYSMAJORVER", "OPSYSNAME", "OPSYSLONGNAME",
                 "OPSYSSHORTNAME", "OPSYSLEGACY", "UNAME_ARCH", "UNAME_OPSYS", "PROCESSOR_INFO"]


def case(name, text, probes, files=None, env=None, subsystem="TOOL"):
    f = {"condor_config": text}
    f.update(files or {})
    return {"name": name, "files": f, "env": env or {}, "subsystem": subsystem, "probes": probes}


def major_of(py):
    p = subprocess.run([py, "-c", "import warnings; warnings.simplefilter('ignore'); "
                        "import htcondor2; print(htcondor2.version().split()[1])"],
                       env={"PATH": "/usr/bin:/bin", "CONDOR_CONFIG": "/dev/null"},
                       capture_output=True, text=True, check=True)
    return int(p.stdout.strip().split(".")[0])


ASSIGN = r"\s*([A-Za-z_][A-Za-z0-9_./]*)\s*(=|@=|\+[,;|*&]{0,2}=)"


def templates(major):
    """Every template in Roost's table, with the knob names it defines."""
    out = []
    for line in open(TABLE % major, encoding="utf-8"):
        parts = line.rstrip("\n").split("\t")
        if parts[0] != "M":
            continue
        body = parts[3].replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")
        names = []
        for l in body.split("\n"):
            m = re.match(ASSIGN, l)
            if m and m.group(1).lower() not in ("use", "if", "elif", "else", "endif"):
                if m.group(1) not in names:
                    names.append(m.group(1))
        out.append((parts[1], parts[2], names))
    return out


def spec_blocks():
    """The condor-config code blocks of the execute-point manual."""
    text = open(os.path.join(SPEC, "ep-policy-configuration.rst"), encoding="utf-8").read().split("\n")
    blocks = []
    i = 0
    while i < len(text):
        m = re.match(r"^(\s*)\.\. code-block:: condor-config", text[i])
        if not m:
            i += 1
            continue
        indent = len(m.group(1))
        i += 1
        body = []
        while i < len(text) and (not text[i].strip() or len(text[i]) - len(text[i].lstrip()) > indent):
            body.append(text[i])
            i += 1
        lines = [l for l in body]
        strip = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
        blocks.append("\n".join(l[strip:] for l in lines).strip() + "\n")
    return blocks


def names_in(text):
    names = []
    for l in text.split("\n"):
        m = re.match(ASSIGN, l)
        if m and m.group(1) not in names:
            names.append(m.group(1))
    return names


def append_cases():
    """HTCondor 25's NAME += value and NAME +<sep>= value (HTCondor 23 reads
    the words before '=' as noise)."""
    c = []
    for sep, tag in [("", "space"), (",", "comma"), (";", "semi"), ("|", "bar"), ("*", "star"), ("&", "amp"),
                     (",,", "comma2"), (";;", "semi2"), ("||", "or"), ("**", "star2"), ("&&", "and")]:
        c.append(case("append-%s" % tag, "A = a\nA +%s= b\nA +%s= c\nB +%s= only\nC =\nC +%s= d\n" % (sep, sep, sep, sep),
                      ["A", "B", "C"]))
    for bad in ["+x", "+,;", "+&|", "+,,,", "+!", "+:", "+(", "+1", "++", "+ "]:
        c.append(case("append-bad-%s" % "".join("%02x" % ord(ch) for ch in bad), "A = a\nA %s= b\n" % bad, ["A"]))
    c.append(case("append-no-space-before", "A = a\nA+= b\n", ["A"]))
    c.append(case("append-colon", "A = a\nA +: b\n", ["A"]))
    c.append(case("append-empty-value", "A = a\nA +=\nB = b\nB +,=\n", ["A", "B"]))
    c.append(case("append-trims", "A = a \n  A   +=   b c  \n", ["A"]))
    c.append(case("append-self-ref", "A = a\nA += $(A)\nB = $(X)\nX = q\nB += $(B) z\n", ["A", "B"]))
    c.append(case("append-unexpanded-empty", "A = $(NOPE)\nA +,= s\n", ["A"]))
    c.append(case("append-then-assign", "A = a\nA +,= b\nA = c\n", ["A"]))
    c.append(case("append-default", "DAEMON_LIST += STARTD\nMAX_DEFAULT_LOG +,= 5\nSTARTD_ATTRS += X\n",
                  ["DAEMON_LIST", "MAX_DEFAULT_LOG", "STARTD_ATTRS"]))
    c.append(case("append-subsys", "X = a\nSTARTD.X += b\nSTARTD.DAEMON_LIST += Y\nY = y\nSTARTD.Y += z\n",
                  ["X", "STARTD.X", "STARTD.DAEMON_LIST", "STARTD.Y"], subsystem="STARTD"))
    c.append(case("append-continued", "A = a\nA += b\\\n c\n", ["A"]))
    c.append(case("append-here-doc", "A = a\nA +=@end\nx\n@end\n", ["A"]))
    c.append(case("append-in-if", "A = a\nif true\nA +,= b\nelse\nA +,= c\nendif\n", ["A"]))
    c.append(case("append-env", "A = a\n", ["A"], env={"_CONDOR_A": "$(A) e"}))
    c.append(case("append-expanded-name", "N = A\nA = a\n$(N) += b\n", ["A"]))
    c.append(case("append-policy", "use POLICY : Always_Run_Jobs\nSTART +&&= (Owner == \"me\")\nSTART +||= false\n", ["START"]))
    c.append(case("append-persistent-list", "STARTD_CRON_JOBLIST = one\nSTARTD_CRON_JOBLIST +,= two\nSTARTD_CRON_JOBLIST += three\n",
                  ["STARTD_CRON_JOBLIST"]))
    return c


def basename_cases():
    """$BASENAME(name) and HTCondor 25's $BASENAME(name, suffix)."""
    text = ("P = /a/b/c.txt\nR = c.tar.gz\nQ = /a/b/\nS = .gz\n"
            "A = $BASENAME(P)\nB = $BASENAME(P, .txt)\nC = $BASENAME(P,.c)\nD = $BASENAME(NOPE)\n"
            "E = $BASENAME(NOPE:/x/y.z)\nF = $BASENAME(P:/x)\nG = $BASENAME(Q)\nH = $BASENAME(R, .gz)\n"
            "I = $BASENAME(R, tar.gz)\nJ = $BASENAME(R,  .gz)\nK = $BASENAME(R,.gz,x)\nL = $BASENAME(P, c.txt)\n"
            "M = $BASENAME(R,)\nN = $BASENAME( R )\nO = $BASENAME(R , .gz)\nT = $BASENAME(R,  .gz )\n"
            "U = $BASENAME(R:/q/w.gz, .gz)\nV = $BASENAME(P, $(S))\nW = $BASENAME(P,x.txt)\n")
    return [case("basename-suffix", text, list("ABCDEFGHIJKLMNOTUVW"))]


def warning_error_cases(major):
    """The templates' conditional `warning :` and `error :` lines, each
    reached (too few arguments, a knob unset) and passed by; and the same
    keywords outside templates (a warning there defines nothing)."""
    W = ["WARNING", "ERROR"]
    c = []
    ckpt = ["DEFAULT_CHECKPOINT_DESTINATION", "EXTENDED_SUBMIT_COMMANDS"] + W
    if major >= 25:
        c.append(case("warn-ckpt-prefix", "DEFAULT_CHECKPOINT_DESTINATION_PREFIX = /ckpt\n"
                      "use FEATURE : DefaultCheckpointDestination\n", ckpt))
        c.append(case("warn-ckpt-destination", "DEFAULT_CHECKPOINT_DESTINATION = /ckpt/x\n"
                      "use FEATURE : DefaultCheckpointDestination\n", ckpt))
        c.append(case("warn-ckpt-warning-then-set", "WARNING = mine\nuse FEATURE : DefaultCheckpointDestination\n"
                      "A = $(WARNING)\n", ["A"] + W))
        c.append(case("warn-ckpt-overridden-after", "use FEATURE : DefaultCheckpointDestination\n"
                      "WARNING = mine\n", W))
        c.append(case("error-project-name-no-arg", "use FEATURE : AssignProjectName\n", W))
        c.append(case("error-project-name-arg", "use FEATURE : AssignProjectName(pmap)\n",
                      ["JOB_TRANSFORM_NAMES", "SCHEDD_CLASSAD_USER_MAP_NAMES"] + W))
    c.append(case("error-accounting-group-arg", "use FEATURE : AssignAccountingGroup(/x/map)\n",
                  ["SCHEDD_CLASSAD_USER_MAP_NAMES", "CLASSAD_USER_MAPFILE_AssignAccountingGroup"] + W))
    c.append(case("error-oneshot-cron-two-args", "use FEATURE : OneShotCronHook(STARTD_CRON, x)\n", W))
    c.append(case("error-oneshot-cron-three-args", "use FEATURE : OneShotCronHook(STARTD_CRON, x, /bin/true)\n",
                  ["STARTD_CRON_JOBLIST", "STARTD_CRON_x_MODE", "STARTD_CRON_x_EXECUTABLE"] + W))
    c.append(case("error-continuous-cron-two-args", "use FEATURE : ContinuousCronHook(SCHEDD_CRON, x)\n", W))
    c.append(case("error-periodic-cron-three-args", "use FEATURE : PeriodicCronHook(STARTD_CRON, x, 60)\n", W))
    c.append(case("error-monitor-four-args", "use FEATURE : Monitor(m, Periodic, 60, /bin/true)\n", W))
    c.append(case("error-monitor-five-args", "use FEATURE : Monitor(m, Periodic, 60, /bin/true, SUM:X)\n",
                  ["STARTD_CRON_JOBLIST", "STARTD_CRON_m_MONITOR_METRICS"] + W))
    c.append(case("error-usermap-one-arg", "use FEATURE : ScheddUsermapFile(m)\n", W))
    c.append(case("error-usermap-two-args", "use FEATURE : ScheddUsermapFile(m, /x/f)\n",
                  ["SCHEDD_CLASSAD_USER_MAP_NAMES", "CLASSAD_USER_MAPFILE_m"] + W))
    c.append(case("error-set-attr-two-args", "use FEATURE : SetJobAttrFromUsermap(A, B)\n", W))
    c.append(case("error-want-hold-if-two-args", "use POLICY : Want_Hold_If(X, 1)\n", W))
    c.append(case("error-preempt-if-empty", "use POLICY : Preempt_If()\n", W))
    # Outside templates: a message only (expanded), no knob.
    c.append(case("warning-top-level", "A = x\nwarning : look at $(A)\nB = 1\n", ["A", "B"] + W))
    c.append(case("warning-top-level-no-space", "warning: nospace\nB = 1\n", ["B"] + W))
    c.append(case("warning-in-if", "if true\n  warning : in if\nendif\nB = 1\n", ["B"] + W))
    c.append(case("warning-keeps-knob", "WARNING = set\nwarning : again\n", W))
    c.append(case("error-top-level", "A = 1\nerror : stop $(A)\nB = 2\n", ["A", "B"]))
    return c


def cases(major):
    c = []
    c.extend(append_cases())
    c.extend(basename_cases())
    # --- the oracle machine's facts: the tests define them the same way
    c.append(case("machine-facts", "A = 1\n", MACHINE_FACTS))
    # --- assignments, names, comments
    c.append(case("assign-basic", "A = 1\nb = two words\nC=3\n  D   =   4  \n", ["A", "B", "c", "D", "a"]))
    c.append(case("assign-empty", "A =\nB = \nC = x\nC =\n", ["A", "B", "C"]))
    c.append(case("assign-colon-old-form", "A : 1\nB:2\nRunBenchmarks : True\n", ["A", "B", "RunBenchmarks"]))
    c.append(case("assign-redefine-last-wins", "A = 1\nB = $(A)\nA = 2\n", ["A", "B"]))
    c.append(case("assign-equals-in-value", "A = x = y\nB = a:b\nC = $(A)==$(B)\n", ["A", "B", "C"]))
    c.append(case("assign-dots-slashes", "a.b = 1\nSTARTD.X = 2\nX = 3\npath/like = 4\n", ["a.b", "STARTD.X", "X", "path/like"]))
    c.append(case("comments", "# comment\nA = 1 # not a comment\n   # indented comment\nB = 2\n", ["A", "B"]))
    c.append(case("ini-section-lines", "[Section]\nA = 1\n[other]\n", ["A"]))
    c.append(case("crlf-lines", "A = 1\r\nB = 2 \r\n", ["A", "B"]))
    c.append(case("tabs", "A\t=\tx\ty\t\n", ["A"]))
    c.append(case("case-insensitive", "MixedCase = 1\nmixedcase = 2\n", ["MIXEDCASE", "mixedCASE"]))
    c.append(case("name-with-macro", "N = FOO\n$(N)_BAR = 5\n", ["FOO_BAR"]))
    c.append(case("at-prefixed-keywords", "@use POLICY : Always_Run_Jobs\n", ["START", "SUSPEND"]))
    c.append(case("value-keeps-inner-spaces", "A =   a    b   c   \n", ["A"]))
    c.append(case("words-between-name-and-op", "FOO BAR = 1\n", ["FOO", "BAR"]))
    c.append(case("plus-equals-is-not-append", "A = 1\nA += 2\nB = x\nB =+ y\n", ["A", "B"]))
    c.append(case("append-idiom", "A = 1\nA = $(A) 2\nA = $(A), 3\n", ["A"]))
    # --- continuation lines
    c.append(case("cont-basic", "A = first \\\n   second\n", ["A"]))
    c.append(case("cont-no-space", "A = first\\\nsecond\n", ["A"]))
    c.append(case("cont-comment-inside", "A = x \\\n# comment \\\n  y\n", ["A"]))
    c.append(case("cont-comment-ends", "B = x \\\n# comment\nC = 1\n", ["B", "C"]))
    c.append(case("cont-blank-ends", "D = a \\\n\nE = 2\n", ["D", "E"]))
    c.append(case("cont-comment-line-no-continue", "# c \\\nF = 3\n", ["F"]))
    c.append(case("cont-multiple", "G=x\\\n   \\\n   z\n", ["G"]))
    c.append(case("cont-at-eof", "H = last \\", ["H"]))
    c.append(case("cont-three", "A = 1 \\\n 2 \\\n 3\n", ["A"]))
    c.append(case("cont-double-backslash", "A = x\\\\\nB = y\n", ["A", "B"]))
    # --- multi-line values
    c.append(case("heredoc", "A @=end\n  line one\n  line two\n@end\nB = 1\n", ["A", "B"]))
    c.append(case("heredoc-comments-blank", "A @=xx\none\n# c\n\ntwo\n@xx\n", ["A"]))
    c.append(case("heredoc-self", "A = base\nA @=end\n$(A) more\n@end\n", ["A"]))
    c.append(case("heredoc-macro-lazy", "A @=end\n$(B)\n@end\nB = late\n", ["A"]))
    c.append(case("heredoc-unterminated", "A @=end\nx\n", ["A"]))
    # --- expansion
    c.append(case("expand-nested", "A = $(B)$(C)\nB = b$(C)\nC = c\n", ["A", "B"]))
    # names built from references: HTCondor scans again from the start
    # after each replacement, so an outer `$(` completed by an inner value
    # is found
    nest = "KEYWORD = T\nT_HOOK_FETCH_WORK = /x/fetch\nX = A\nV_A = va\nY = B\nW = V_\n"
    c.append(case("expand-name-keyword-hook", nest + "A = $($(KEYWORD)_HOOK_FETCH_WORK)\n", ["A"]))
    c.append(case("expand-name-suffix", nest + "A = $(V_$(X))\nB = $(V_$(X))$(V_$(X)) and $(V_$(X))\n", ["A", "B"]))
    c.append(case("expand-name-inner-undefined", nest + "A = $(V_$(NOPE))\nB = $(V_$(NOPE):dflt)\nC = $(V_$(Y):dflt)\n", ["A", "B", "C"]))
    c.append(case("expand-name-inner-default", nest + "A = $(V_$(Y:A))\nB = $(V_$(X):dflt)\nC = $($(X)$(NOPE)_Z:zz)\n", ["A", "B", "C"]))
    c.append(case("expand-name-two-parts", nest + "A = $($(W)$(X))\nB = $($(W)$(Y))\n", ["A", "B"]))
    c.append(case("expand-name-three-deep", nest + "P = X\nA = $(V_$($(P)))\nB = $(V_$(X$(NOPE)))\n", ["A", "B"]))
    c.append(case("expand-name-via-value", nest + "K2 = $(X)\nA = $(V_$(K2))\nQ = $(V_\nB = $(Q)$(X))\n", ["A", "B"]))
    c.append(case("expand-name-not-closed", nest + "A = pre $(V_$(X) post\nB = $(V_$(X) $(X))\n", ["A", "B"]))
    c.append(case("expand-name-escaped", nest + "A = $$(V_$(X))\nB = $(DOLLAR)(V_$(X))\nE = ENV\nC = $$(E)(HOME)\n", ["A", "B", "C"]))
    c.append(case("expand-name-env", nest + "A = $ENV($(NOPE)HOME)\nH = HOME\nB = $ENV($(H))\n", ["A", "B"], env={"HOME": "/home/probe"}))
    c.append(case("expand-name-in-use", nest + "CAT = POL\nuse $(CAT)ICY : Always_Run_Jobs\nSTART_$(X) = $(V_$(X))\n", ["START", "START_A"]))
    c.append(case("expand-name-cycle", "X = A\nV_A = $(V_$(X))\nB = $(V_A)\n", ["B", "V_A"]))
    # a value equal to the knob's default keeps the default's text
    c.append(case("default-text-booleans",
                  "CONTINUE = tRUE\nABORT_ON_EXCEPTION = FALSE\nADSTASH_SCHEDD_HISTORY = false\nA = $(ABORT_ON_EXCEPTION)\n"
                  "ADSTASH_SCHEDD_JOB_EPOCH_HISTORY = TRUE\nALLOW_VM_CRUFT = FALSE\n",
                  ["CONTINUE", "ABORT_ON_EXCEPTION", "ADSTASH_SCHEDD_HISTORY", "A", "ADSTASH_SCHEDD_JOB_EPOCH_HISTORY", "ALLOW_VM_CRUFT"]))
    c.append(case("default-text-not-booleans",
                  "DAEMON_LIST = master\nCGROUP_MEMORY_LIMIT_POLICY = HARD\nBASE_CGROUP = htcondor\nCLAIM_WORKLIFE = 1200\nCONTINUE = yes\n",
                  ["DAEMON_LIST", "CGROUP_MEMORY_LIMIT_POLICY", "BASE_CGROUP", "CLAIM_WORKLIFE", "CONTINUE"]))
    c.append(case("default-text-prefixed",
                  "FOO.CONTINUE = tRuE\nSTARTD.ABORT_ON_EXCEPTION = FALSE\nSLOT1_CONTINUE = TRUE\n",
                  ["FOO.CONTINUE", "STARTD.ABORT_ON_EXCEPTION", "SLOT1_CONTINUE"]))
    c.append(case("default-text-environment", "A = 1\n", ["ABORT_ON_EXCEPTION", "CONTINUE"],
                  env={"_CONDOR_ABORT_ON_EXCEPTION": "FALSE", "_CONDOR_CONTINUE": "TRUE"}))
    c.append(case("expand-undefined-empty", "A = x$(NOPE)y\n", ["A"]))
    c.append(case("expand-default", "A = $(NOPE:dflt)\nB = $(C:dflt)\nC = set\n", ["A", "B"]))
    c.append(case("expand-default-nested", "A = $(X:$(Y:$(Z)))\nZ = zz\n", ["A"]))
    c.append(case("expand-default-empty-value", "E =\nA = $(E:was empty)\n", ["A"]))
    c.append(case("expand-default-chars", "A = $(N:hello world, $$ \\ : ok)\nB = $(N:a-b)\nC = $(N:a=b)\n", ["A", "B", "C"]))
    c.append(case("expand-default-parens", "A = $(N:f(x))\n", ["A"]))
    c.append(case("expand-self-append", "X = a\nX = $(X) b\nX = $(X) c\n", ["X"]))
    c.append(case("expand-self-append-undefined", "X = $(X) b\n", ["X"]))
    c.append(case("expand-self-default", "X = $(X:start) b\n", ["X"]))
    c.append(case("expand-self-append-default-table", "STARTD_ATTRS = $(STARTD_ATTRS) Foo\n", ["STARTD_ATTRS"]))
    c.append(case("expand-self-lazy-other", "X = $(Y) $(X)\nY = 1\nX = $(X) z\nY = 2\n", ["X"]))
    c.append(case("expand-dollardollar", "A = $$(Memory) $$([Memory*2]) $$(Foo:bar)\n", ["A"]))
    c.append(case("expand-dollar-macro", "A = $(DOLLAR)(X) $(dollar)\nX = no\n", ["A"]))
    c.append(case("expand-dollar-literal", "A = cost $5 and $ alone and $x\n", ["A"]))
    c.append(case("expand-unterminated", "A = $(B\nB = 1\n", ["A"]))
    c.append(case("expand-empty-name", "A = x$()y\n", ["A"]))
    c.append(case("expand-case-insensitive-ref", "lower = v\nA = $(LOWER)$(Lower)\n", ["A"]))
    c.append(case("expand-subsys-prefix-ref", "TOOL.X = tool\nX = plain\nA = $(X)\n", ["A", "X"]))
    c.append(case("expand-dotted-ref", "STARTD.X = s\nA = $(STARTD.X)\n", ["A"]))
    c.append(case("expand-deep-chain", "".join("K%d = $(K%d)x\n" % (i, i + 1) for i in range(40)) + "K40 = end\n", ["K0", "K20"]))
    c.append(case("circular-two", "A = $(B)\nB = $(A)\n", ["A"]))
    c.append(case("circular-self-via", "A = x$(B)\nB = $(C)\nC = $(A)\n", ["C"]))
    # $ENV
    c.append(case("env-basic", "A = $ENV(ROOST_T1)\nB = $ENV(ROOST_NOPE)\nC = $ENV(ROOST_NOPE:dflt)\nD = $ENV(ROOST_T1:dflt)\n",
                  ["A", "B", "C", "D"], env={"ROOST_T1": "from env"}))
    c.append(case("env-empty", "A = $ENV(ROOST_EMPTY)\nB = $ENV(ROOST_EMPTY:d)\n", ["A", "B"], env={"ROOST_EMPTY": ""}))
    c.append(case("env-macro-inside", "A = $ENV(ROOST_T2)\nX = expanded\n", ["A"], env={"ROOST_T2": "$(X)"}))
    # $INT $REAL $STRING $EVAL
    c.append(case("int-basic", "N = 42\nA = $INT(N)\nB = $INT(N,%05d)\nC = $INT(7)\nE = 2*3+1\nD = $INT(E)\n", ["A", "B", "C", "D"]))
    c.append(case("int-real-truncates", "R = 3.7\nA = $INT(R)\nB = $INT(-2.5)\n", ["A", "B"]))
    c.append(case("int-hex-format", "N = 255\nA = $INT(N,%x)\nB = $INT(N,%X)\nC = $INT(N,%o)\nD = $INT(N,%-6d|)\n", ["A", "B", "C", "D"]))
    c.append(case("int-bad", "S = hello\nA = $INT(S)\n", ["A"]))
    c.append(case("int-bad-format", "N = 1\nA = $INT(N,%s)\n", ["A"]))
    c.append(case("int-bool", "B = true\nA = $INT(B)\n", ["A"]))
    c.append(case("real-basic", "R = 2.5\nA = $REAL(R)\nB = $REAL(R,%.3f)\nC = $REAL(10)\nD = $REAL(1/3.0)\nE = $REAL(R,%g)\n", ["A", "B", "C", "D", "E"]))
    c.append(case("real-big", "A = $REAL(1e20)\nB = $REAL(0.1)\nC = $REAL(-0.000001234)\n", ["A", "B", "C"]))
    c.append(case("string-basic", 'S = "quoted"\nA = $STRING(S)\nT = plain text\nB = $STRING(T)\nC = $STRING(S,[%s])\nE = strcat("a","b")\nD = $STRING(E)\n', ["A", "B", "C", "D"]))
    c.append(case("eval-basic", 'A = $EVAL(1+2)\nX = 2*21\nB = $EVAL(X)\nC = $EVAL("str")\nD = $EVAL(strcat("a", "b"))\nE = $EVAL(1.5*2)\nF = $EVAL(undefined)\nG = $EVAL({1,2})\n', ["A", "B", "C", "D", "E", "F", "G"]))
    c.append(case("eval-not-classad", "A = $EVAL(not [ valid)\n", ["A"]))
    # $SUBSTR
    c.append(case("substr", "S = abcdefgh\nA = $SUBSTR(S,2)\nB = $SUBSTR(S,2,3)\nC = $SUBSTR(S,-3)\nD = $SUBSTR(S,1,-2)\nE = $SUBSTR(S,20)\nF = $SUBSTR(S,0,-20)\nG = $SUBSTR(NOPE,1)\n",
                  ["A", "B", "C", "D", "E", "F", "G"]))
    c.append(case("substr-bad", "S = abc\nA = $SUBSTR(S,x)\n", ["A"]))
    # $CHOICE / RANDOM
    c.append(case("choice", "L = a, b ,c\nI = 1\nA = $CHOICE(I, L)\nB = $CHOICE(2, x, y, z)\nC = $CHOICE(0,L)\n", ["A", "B", "C"]))
    c.append(case("choice-out-of-range", "L = a,b\nA = $CHOICE(5,L)\n", ["A"]))
    c.append(case("choice-no-list", "A = $CHOICE(1,NOLIST)\n", ["A"]))
    c.append(case("random-deterministic", "A = $RANDOM_CHOICE(x,x,x)\nB = $RANDOM_INTEGER(5,5,1)\nL = q\nC = $RANDOM_CHOICE(L)\n", ["A", "B", "C"]))
    c.append(case("random-integer-bad", "A = $RANDOM_INTEGER(9,1,1)\n", ["A"]))
    # path functions
    paths = "P = /opt/condor/etc/config.d/50-site.conf\nQ = \"/a b/c.tar.gz\"\nR = plain.txt\nW = C:\\dir\\file.ext\n"
    fl = ["Fp", "Fn", "Fx", "Fnx", "Fd", "Fdd", "Fdb", "Fpb", "Fxb", "Fq", "Fqa", "Fnq", "Fpn", "Fdn", "Fw", "Fu"]
    for v in ["P", "Q", "R", "W"]:
        text = paths + "".join("A_%s = $%s(%s)\n" % (f, f, v) for f in fl) + "B = $BASENAME(%s)\nD = $DIRNAME(%s)\n" % (v, v)
        c.append(case("path-functions-" + v, text, ["A_" + f for f in fl] + ["B", "D"]))
    c.append(case("path-function-undefined", "A = x$Fn(NOPE)y\n", ["A"]))
    c.append(case("path-function-self", "P = /a/b/c.d\nP = $Fp(P)\n", ["P"]))
    c.append(case("unknown-function", "A = $NOPE(x) $Foo(y)\n", ["A"]))
    # --- if / elif / else
    c.append(case("if-true-false", "if true\nA = 1\nelse\nA = 2\nendif\nif false\nB = 1\nelse\nB = 2\nendif\n", ["A", "B"]))
    c.append(case("if-numbers", "if 0\nA = yes\nendif\nif 1\nB = yes\nendif\nif 0.0\nC = yes\nendif\nif -2\nD = yes\nendif\nif 1e3\nE = yes\nendif\n", ["A", "B", "C", "D", "E"]))
    c.append(case("if-crufty", "if yes\nA = 1\nendif\nif T\nB = 1\nendif\nif no\nC = 1\nendif\nif f\nD = 1\nendif\nif TRUE\nE = 1\nendif\n", ["A", "B", "C", "D", "E"]))
    c.append(case("if-not", "if ! false\nA = 1\nendif\nif !true\nB = 1\nendif\n", ["A", "B"]))
    c.append(case("if-defined", "X = 1\nE =\nif defined X\nA = 1\nendif\nif defined Y\nB = 1\nendif\nif defined E\nC = 1\nendif\nif ! defined Y\nD = 1\nendif\n", ["A", "B", "C", "D"]))
    c.append(case("if-defined-default-table", "if defined MINUTE\nA = 1\nendif\nif defined NOT_A_KNOB_XYZ\nB = 1\nendif\n", ["A", "B"]))
    c.append(case("if-defined-literals", "if defined true\nA = 1\nendif\nif defined 12\nB = 1\nendif\nif defined\nC = 1\nendif\n", ["A", "B", "C"]))
    c.append(case("if-defined-use", "if defined use POLICY\nA = 1\nendif\nif defined use POLICY:Desktop\nB = 1\nendif\nif defined use POLICY:NoSuch\nC = 1\nendif\nif defined use NOCAT\nD = 1\nendif\n", ["A", "B", "C", "D"]))
    c.append(case("if-macro-expanded", "FLAG = true\nif $(FLAG)\nA = 1\nendif\nif $(NOPE)\nB = 1\nendif\nN = 0\nif $(N)\nC = 1\nendif\n", ["A", "B", "C"]))
    c.append(case("if-elif", "V = 2\nif $(V) == 1\nA = x\nendif\n", ["A"]))
    c.append(case("elif-chain", "if false\nA = 1\nelif true\nA = 2\nelif true\nA = 3\nelse\nA = 4\nendif\n", ["A"]))
    c.append(case("elif-none", "if false\nA = 1\nelif false\nA = 2\nelse\nA = 4\nendif\n", ["A"]))
    c.append(case("if-nested", "if true\n if false\n  A = 1\n else\n  A = 2\n  if true\n   B = 3\n  endif\n endif\nelse\n A = 5\nendif\n", ["A", "B"]))
    c.append(case("if-nested-in-false", "if false\n if true\n  A = 1\n endif\n B = 2\nendif\n", ["A", "B"]))
    c.append(case("if-lazy-vs-read-time", "X = 1\nif defined X\nA = $(Y)\nendif\nY = late\n", ["A"]))
    c.append(case("if-colon-prefix", ":if true\n:A = 1\n:endif\n", ["A"]))
    for v in ["8.0.0", "8.1", "23.0.0", "23.9.6", "23.9.5", "24.0.0", "99.1.1", "v9.0.0", "23.10.29", "25.14.1",
              "25.14", "25.14.2", "25.0"]:
        for op in [">=", ">", "<=", "<", "==", "!=", ""]:
            c.append(case("if-version-%s-%s" % ({">=": "ge", ">": "gt", "<=": "le", "<": "lt", "==": "eq", "!=": "ne", "": "bare"}[op], v),
                          "if version %s %s\nA = yes\nelse\nA = no\nendif\n" % (op, v), ["A"]))
    c.append(case("if-version-invalid", "if version >= 5.1\nA = 1\nendif\n", ["A"]))
    c.append(case("if-complex", "if $(X) && true\nA = 1\nendif\n", ["A"]))
    c.append(case("if-not-conditional", "if foo\nA = 1\nendif\n", ["A"]))
    c.append(case("if-unterminated", "if true\nA = 1\n", ["A"]))
    c.append(case("else-without-if", "A = 1\nelse\n", ["A"]))
    c.append(case("endif-without-if", "endif\n", ["A"]))
    c.append(case("else-after-else", "if true\nelse\nelse\nendif\n", ["A"]))
    c.append(case("elif-after-else", "if true\nelse\nelif true\nendif\n", ["A"]))
    # --- include
    c.append(case("include-basic", "A = 1\ninclude : {ROOT}/inc.conf\nC = $(B)\n", ["A", "B", "C"], files={"inc.conf": "B = from include\nA = 2\n"}))
    c.append(case("include-relative-config-root", "include : $(CONFIG_ROOT)/inc.conf\n", ["B"], files={"inc.conf": "B = rel\n"}))
    c.append(case("include-ifexist-missing", "include ifexist : {ROOT}/nope.conf\nA = 1\n", ["A"]))
    c.append(case("include-missing", "include : {ROOT}/nope.conf\nA = 1\n", ["A"]))
    c.append(case("include-nested", "include : {ROOT}/a.conf\n", ["A", "B"], files={"a.conf": "A = a\ninclude : {ROOT}/b.conf\n", "b.conf": "B = b$(A)\n"}))
    c.append(case("include-command", "include : {ROOT}/gen.sh |\n", ["G", "H"], files={"gen.sh": "#!/bin/sh\necho 'G = generated'\necho 'H = $(G) too'\n"}))
    c.append(case("include-command-keyword", "include command : {ROOT}/gen.sh\n", ["G"], files={"gen.sh": "#!/bin/sh\necho 'G = generated'\n"}))
    c.append(case("include-error-inside", "include : {ROOT}/bad.conf\n", ["A"], files={"bad.conf": "A = 1\nthis is not valid\n"}))
    c.append(case("include-if-inside", "include : {ROOT}/i.conf\nB = 2\n", ["A", "B"], files={"i.conf": "if true\nA = 1\nendif\n"}))
    c.append(case("include-unterminated-if", "include : {ROOT}/i.conf\n", ["A"], files={"i.conf": "if true\nA = 1\n"}))
    # --- error / warning
    c.append(case("warning-line", "warning : watch out $(X)\nX = 1\nA = 2\n", ["A"]))
    c.append(case("error-line", "A = 1\nerror : stop here\nB = 2\n", ["A", "B"]))
    c.append(case("error-in-false-if", "if false\nerror : never\nendif\nA = 1\n", ["A"]))
    # --- syntax errors
    c.append(case("syntax-no-operator", "A = 1\njustaword\n", ["A"]))
    c.append(case("syntax-illegal-name", "A-B = 1\n", ["A"]))
    c.append(case("syntax-illegal-name-expanded", "N = a-b\n$(N) = 1\n", ["A"]))
    c.append(case("syntax-at-without-equals", "A @ x\n", ["A"]))
    c.append(case("use-unknown-template", "use POLICY : NoSuchPolicy\n", ["A"]))
    c.append(case("use-unknown-category", "use NOSUCHCAT : Desktop\n", ["A"]))
    c.append(case("use-no-category", "use : Desktop\n", ["A"]))
    # --- subsystems and local names
    c.append(case("subsys-override", "X = plain\nSTARTD.X = startd\nTOOL.Y = tool\nY = plainy\n", ["X", "Y"], subsystem="STARTD"))
    c.append(case("subsys-override-tool", "X = plain\nSTARTD.X = startd\nTOOL.Y = tool\nY = plainy\n", ["X", "Y"]))
    c.append(case("subsys-self-append", "X = a\nSTARTD.X = $(X) b\n", ["X"], subsystem="STARTD"))
    c.append(case("subsys-macro", "A = $(SUBSYSTEM)\nB = $(LOCALNAME)\n", ["A", "B"], subsystem="STARTD"))
    c.append(case("subsys-lazy-ref", "Z = $(X)\nX = plain\nSTARTD.X = startd\n", ["Z"], subsystem="STARTD"))
    c.append(case("subsys-defaults", "A = 1\n", ["MASTER.PID_SNAPSHOT_INTERVAL", "PID_SNAPSHOT_INTERVAL"], subsystem="MASTER"))
    c.append(case("slot-prefixed", "SLOT1_USER = one\nSLOT2_EXECUTE = /x\nA = $(SLOT1_USER)\n", ["A", "SLOT2_EXECUTE"]))
    # --- local config files and dirs
    c.append(case("local-config-file", "LOCAL_CONFIG_FILE = {ROOT}/local1, {ROOT}/local2\nA = root\n", ["A", "B"],
                  files={"local1": "A = local1\nB = 1\n", "local2": "B = 2\n"}))
    c.append(case("local-config-file-missing", "LOCAL_CONFIG_FILE = {ROOT}/nope\nA = root\n", ["A"]))
    c.append(case("local-config-file-missing-not-required", "LOCAL_CONFIG_FILE = {ROOT}/nope\nREQUIRE_LOCAL_CONFIG_FILE = false\nA = root\n", ["A"]))
    c.append(case("local-config-file-chain", "LOCAL_CONFIG_FILE = {ROOT}/l1\n", ["A", "B"],
                  files={"l1": "A = 1\nLOCAL_CONFIG_FILE = {ROOT}/l1 {ROOT}/l2\n", "l2": "B = 2\n"}))
    c.append(case("local-config-file-command", "LOCAL_CONFIG_FILE = {ROOT}/gen.sh |\n", ["G"], files={"gen.sh": "#!/bin/sh\necho G = piped\n"}))
    c.append(case("local-config-dir", "LOCAL_CONFIG_DIR = {ROOT}/config.d\nA = root\n", ["A", "B", "C", "D"],
                  files={"config.d/10-a": "A = ten\nB = ten\n", "config.d/20-b.conf": "B = twenty\n", "config.d/30-c.py": "C = python\n",
                         "config.d/40-d~": "D = backup\n", "config.d/.hidden": "D = hidden\n", "config.d/50-e.rpmnew": "D = rpmnew\n"}))
    c.append(case("local-config-dir-exclude", "LOCAL_CONFIG_DIR = {ROOT}/d\nLOCAL_CONFIG_DIR_EXCLUDE_REGEXP = ^skip.*\n", ["A", "B"],
                  files={"d/keep": "A = kept\n", "d/skip-me": "B = skipped\n"}))
    c.append(case("local-config-dir-and-file-order", "LOCAL_CONFIG_DIR = {ROOT}/d\nLOCAL_CONFIG_FILE = {ROOT}/f\n", ["A"],
                  files={"d/x": "A = dir\n", "f": "A = file\n"}))
    c.append(case("local-config-dir-missing", "LOCAL_CONFIG_DIR = {ROOT}/nope\nA = 1\n", ["A"]))
    c.append(case("local-config-dir-changed", "LOCAL_CONFIG_DIR = {ROOT}/d1\nLOCAL_CONFIG_FILE = {ROOT}/f\n", ["A", "B"],
                  files={"d1/x": "A = d1\n", "f": "LOCAL_CONFIG_DIR = {ROOT}/d2\n", "d2/y": "B = d2\n"}))
    c.append(case("config-root", "A = $(CONFIG_ROOT)\n", ["A"]))
    # --- environment overrides
    c.append(case("env-override", "A = file\nB = file\n", ["A", "B", "C"], env={"_CONDOR_A": "env", "_condor_C": "lower prefix"}))
    c.append(case("env-override-self", "A = file\n", ["A"], env={"_CONDOR_A": "$(A) plus env"}))
    c.append(case("env-override-subsys", "X = file\n", ["X"], env={"_CONDOR_STARTD.X": "env startd"}, subsystem="STARTD"))
    c.append(case("env-override-local-config", "A = 1\n", ["B"], env={"_CONDOR_LOCAL_CONFIG_FILE": "{ROOT}/l"}, files={"l": "B = local\n"}))
    # --- AUTO_USE
    c.append(case("auto-use", "AUTO_USE_POLICY_ALWAYS_RUN_JOBS = true\n", ["START", "WANT_VACATE"]))
    c.append(case("auto-use-false", "AUTO_USE_POLICY_ALWAYS_RUN_JOBS = false\n", ["START"]))
    # --- defaults the daemon relies on
    defaults = ["MINUTE", "HOUR", "DAY", "WEEK", "StateTimer", "ActivityTimer", "ActivationTimer", "IsVanilla", "IsJava", "IsVM",
                "MachineMaxVacateTime", "MaxVacateTime", "UPDATE_INTERVAL", "POLLING_INTERVAL", "START", "SUSPEND", "CONTINUE",
                "PREEMPT", "KILL", "WANT_SUSPEND", "WANT_VACATE", "RANK", "IS_OWNER", "MaxJobRetirementTime", "CLAIM_WORKLIFE",
                "MATCH_TIMEOUT", "KILLING_TIMEOUT", "STARTD_JOB_HOOK_KEYWORD", "FetchWorkDelay", "NUM_SLOTS", "SLOT_TYPE_1",
                "NUM_SLOTS_TYPE_1", "SLOT_TYPE_1_PARTITIONABLE", "STARTD_ATTRS", "STARTD_DEBUG", "ENABLE_BACKFILL",
                "HIBERNATE_CHECK_INTERVAL", "HIBERNATE", "STARTER_UPDATE_INTERVAL", "CONTINUE_VANILLA", "SUSPEND_VANILLA",
                "PREEMPT_VANILLA", "KILL_VANILLA", "WANT_SUSPEND_VANILLA", "WANT_VACATE_VANILLA", "STARTD_CRON_JOBLIST",
                "JOB_ROUTER_HOOK_KEYWORD", "VANILLA", "JAVA", "VM", "BackgroundLoad", "HighLoad", "StartIdleTime",
                "ContinueIdleTime", "MaxSuspendTime", "SmallJob", "CPUIdle", "CPUBusy", "KeyboardBusy",
                "STARTD_CRON_NAME", "MODIFY_REQUEST_EXPR_REQUESTCPUS", "MODIFY_REQUEST_EXPR_REQUESTMEMORY",
                "MODIFY_REQUEST_EXPR_REQUESTDISK", "MUST_MODIFY_REQUEST_EXPRS", "CONSUMPTION_POLICY", "ALLOW_PSLOT_PREEMPTION",
                "USE_PROCD", "RUNBENCHMARKS", "DRAINING_POLICY", "DEFAULT_DRAINING_START_EXPR", "STARTD_HOOK_TIMEOUT"]
    c.append(case("defaults-execute-point", "A = 1\n", defaults))
    c.append(case("defaults-override", "MINUTE = 61\n", ["HOUR", "MINUTE", "StateTimer"]))
    c.append(case("defaults-lazy-override-vanilla", "VANILLA = 99\n", ["IsVanilla"]))
    # --- templates
    for cat, name, knobs in templates(major):
        if cat in ("UPGRADE", "EXPERIMENTAL"):
            continue
        # WARNING and ERROR: a template's "warning :" line also defines
        # WARNING (HTCondor reads it as an assignment too).
        probes = (knobs[:40] if knobs else ["A"]) + ["WARNING", "ERROR"]
        c.append(case("use-%s-%s" % (cat.lower(), name.lower()), "use %s : %s\n" % (cat, name), probes))
    c.extend(warning_error_cases(major))
    c.append(case("use-lowercase", "use policy : desktop\n", ["START", "KILL"]))
    c.append(case("use-two-on-a-line", "use ROLE : Execute, Submit\n", ["DAEMON_LIST"]))
    c.append(case("use-space-separated", "use POLICY : Always_Run_Jobs Limit_Job_Runtimes\n", ["START", "PREEMPT", "MaxJobRetirementTime"]))
    c.append(case("use-args-limit", "use POLICY : Limit_Job_Runtimes(3600)\n", ["MAX_JOB_RUNTIME", "PREEMPT", "MaxJobRetirementTime"]))
    c.append(case("use-args-default", "use POLICY : Limit_Job_Runtimes\n", ["MAX_JOB_RUNTIME", "PREEMPT"]))
    c.append(case("use-args-empty", "use POLICY : Limit_Job_Runtimes()\n", ["MAX_JOB_RUNTIME"]))
    c.append(case("use-preempt-if", "use POLICY : Preempt_If(Memory > 100)\n", ["PREEMPT", "WANT_SUSPEND", "MAXJOBRETIREMENTTIME"]))
    c.append(case("use-preempt-if-commas", "use POLICY : Preempt_If(ifThenElse(x, 1, 2) > 1)\n", ["PREEMPT"]))
    c.append(case("use-want-hold-if", "use POLICY : Want_Hold_If(MemoryUsage > 2*Memory, 101, too much memory)\n",
                  ["WANT_HOLD", "WANT_HOLD_SUBCODE", "WANT_HOLD_REASON", "PREEMPT", "WANT_SUSPEND"]))
    c.append(case("use-hold-if-memory", "use POLICY : Hold_If_Memory_Exceeded\n", ["MEMORY_EXCEEDED", "WANT_HOLD", "WANT_HOLD_REASON", "PREEMPT", "WANT_HOLD_SUBCODE"]))
    c.append(case("use-preempt-if-memory", "use POLICY : Preempt_If_Memory_Exceeded\n", ["MEMORY_EXCEEDED", "PREEMPT", "WANT_SUSPEND"]))
    c.append(case("use-then-override", "use POLICY : Desktop\nSTART = True\n", ["START", "SUSPEND"]))
    c.append(case("use-override-before", "START = False\nuse POLICY : Always_Run_Jobs\n", ["START"]))
    c.append(case("use-append-after", "use POLICY : Always_Run_Jobs\nSTART = $(START) && (Owner == \"me\")\n", ["START"]))
    c.append(case("use-gpus-args", "use FEATURE : GPUs(-detect)\n", ["MACHINE_RESOURCE_INVENTORY_GPUs", "GPU_DISCOVERY_EXTRA"]))
    c.append(case("use-partitionable-args", "use FEATURE : PartitionableSlot(2, 50%)\n", ["SLOT_TYPE_2", "SLOT_TYPE_2_PARTITIONABLE", "NUM_SLOTS_TYPE_2"]))
    c.append(case("use-static-slots", "use FEATURE : StaticSlots\n", ["SLOT_TYPE_1", "SLOT_TYPE_1_PARTITIONABLE", "NUM_SLOTS_TYPE_1", "NUM_SLOTS"]))
    c.append(case("use-cron-hook", "use FEATURE : PeriodicCronHook(TEST, 300, /bin/true, -x)\n",
                  ["STARTD_CRON_JOBLIST", "STARTD_CRON_TEST_MODE", "STARTD_CRON_TEST_PERIOD", "STARTD_CRON_TEST_EXECUTABLE", "STARTD_CRON_TEST_ARGS"]))
    c.append(case("use-in-if", "if true\nuse POLICY : Always_Run_Jobs\nendif\nif false\nuse POLICY : Desktop\nendif\n", ["START", "SUSPEND"]))
    c.append(case("use-macro-category", "CAT = POLICY\nuse $(CAT) : Always_Run_Jobs\n", ["START"]))
    # --- the execute-point manual's examples
    for i, block in enumerate(spec_blocks()):
        probes = names_in(block)
        if not probes:
            continue
        c.append(case("manual-ep-%02d" % i, block, probes[:40]))
    return c


def main():
    args = sys.argv[1:]
    only = set()
    if "--only" in args:
        i = args.index("--only")
        only = set(args[i + 1:])
        args = args[:i]
    py = args[0] if args else sys.executable
    major = major_of(py)
    out_path = OUT % major
    all_cases = cases(major)
    if only:
        old = {}
        for line in open(out_path):
            cs = json.loads(line)
            old[cs["name"]] = cs
        with open(out_path, "w") as f:
            for cs in all_cases:
                if cs["name"] in only or cs["name"] not in old:
                    run_case(py, cs)
                    print("regenerated", cs["name"], file=sys.stderr)
                else:
                    cs = old[cs["name"]]
                f.write(json.dumps(cs, sort_keys=True) + "\n")
        return
    names = [x["name"] for x in all_cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit("duplicate case names: %s" % sorted(dup))
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as f:
        for i, cs in enumerate(all_cases):
            run_case(py, cs)
            f.write(json.dumps(cs, sort_keys=True) + "\n")
            print("%d/%d %s" % (i + 1, len(all_cases), cs["name"]), file=sys.stderr)
    print("wrote %d cases to %s" % (len(all_cases), out_path))


if __name__ == "__main__":
    main()
