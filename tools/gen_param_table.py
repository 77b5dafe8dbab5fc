#!/usr/bin/env python3
"""Regenerates src/config/param_table_<MAJOR>.txt: HTCondor's built-in
configuration defaults and its `use CATEGORY : Template` bodies, as data, for
each HTCondor release Roost's configuration reader can behave as.

The facts are read from HTCondor itself: the `htcondor` wheel on PyPI carries
HTCondor's utility library, whose compiled parameter table (the defaults, the
per-subsystem defaults and the templates, exactly as the daemons see them) is
reached through the library's exported lookup functions with ctypes. Each
Python given must have one release of the wheel installed:

    python3 -m venv /tmp/v23 && /tmp/v23/bin/pip install htcondor==23.10.29
    python3 -m venv /tmp/v25 && /tmp/v25/bin/pip install htcondor==25.14.1
    python3 tools/gen_param_table.py /tmp/v23/bin/python /tmp/v25/bin/python
    python3 tools/gen_param_table.py --check PYTHON...   # exit 1 if stale

Output format, one entry per line (UTF-8, sorted by name within each part):

    D<TAB>NAME<TAB>TYPE<TAB>VALUE      a default; TYPE is string|int|bool|double|long|path
    M<TAB>CATEGORY<TAB>NAME<TAB>BODY   a template of `use CATEGORY : NAME`

A per-subsystem default is named `SUBSYS.NAME`. VALUE and BODY escape
backslash as `\\\\`, newline as `\\n` and tab as `\\t`. The first line names the
release; Roost takes the release's version (`if version`, `$(CONDOR_VERSION)`)
from the table's CONDOR_VERSION default.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Runs inside the Python that has the wheel: prints the table as JSON.
CHILD = r"""
import ctypes, glob, json, os, re, sys, warnings
warnings.simplefilter("ignore")
import htcondor2
libs = os.path.join(os.path.dirname(os.path.dirname(htcondor2.__file__)), "htcondor.libs")
path = glob.glob(os.path.join(libs, "libcondor_utils_*.so"))[0]
lib = ctypes.CDLL(path)

class KeyValue(ctypes.Structure):          # condor_params::key_value_pair
    _fields_ = [("key", ctypes.c_char_p), ("value", ctypes.c_void_p)]

class KeyTable(ctypes.Structure):          # condor_params::key_table_pair
    _fields_ = [("key", ctypes.c_char_p), ("table", ctypes.POINTER(KeyValue)),
                ("count", ctypes.c_int)]

def fn(symbol, restype, argtypes):
    f = getattr(lib, symbol)
    f.restype, f.argtypes = restype, argtypes
    return f

name_by_id = fn("_Z24param_default_name_by_idi", ctypes.c_char_p, [ctypes.c_int])
raw_by_id = fn("_Z26param_default_rawval_by_idi", ctypes.c_char_p, [ctypes.c_int])
type_by_id = fn("_Z24param_default_type_by_idi", ctypes.c_int, [ctypes.c_int])
path_by_id = fn("_Z26param_default_ispath_by_idi", ctypes.c_bool, [ctypes.c_int])
entry_type = fn("_Z20param_entry_get_typePKN13condor_params14key_value_pairE",
                ctypes.c_int, [ctypes.POINTER(KeyValue)])
subsys_table = fn("_Z22param_get_subsys_tablePKvPKcPPKN13condor_params14key_value_pairE",
                  ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.POINTER(ctypes.POINTER(KeyValue))])
meta_by_id = fn("_Z23param_meta_source_by_idiPPKN13condor_params14key_table_pairE",
                ctypes.POINTER(KeyValue), [ctypes.c_int, ctypes.POINTER(ctypes.POINTER(KeyTable))])

def text(kv):
    # Every typed default starts with its text (nodef_value::psz).
    if not kv.value:
        return ""
    s = ctypes.cast(kv.value, ctypes.POINTER(ctypes.c_char_p))[0]
    return (s or b"").decode()

out = {"version": htcondor2.version(), "defaults": [], "subsys": [], "metas": []}
i = 0
while (name := name_by_id(i)) is not None:
    out["defaults"].append([name.decode(), type_by_id(i), bool(path_by_id(i)),
                            (raw_by_id(i) or b"").decode()])
    i += 1
# The subsystem table is not exported: try every word of the library as a
# subsystem name (lookups ignore case, so keep one spelling of each).
seen = set()
for word in sorted(set(re.findall(rb"[A-Za-z][A-Za-z0-9_]{1,40}", open(path, "rb").read()))):
    if word.upper() in seen:
        continue
    table = ctypes.POINTER(KeyValue)()
    n = subsys_table(None, word, ctypes.byref(table))
    if n > 0:
        seen.add(word.upper())
        for j in range(n):
            kv = table[j]
            out["subsys"].append([word.decode().upper(), kv.key.decode(),
                                  entry_type(ctypes.byref(kv)), text(kv)])
i = 0
while True:
    category = ctypes.POINTER(KeyTable)()
    kv = meta_by_id(i, ctypes.byref(category))
    if not kv:
        break
    out["metas"].append([category.contents.key.decode(), kv.contents.key.decode(),
                         text(kv.contents)])
    i += 1
json.dump(out, sys.stdout)
"""

KIND = {0: "string", 1: "int", 2: "bool", 3: "double", 4: "long"}


def escape(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def read_table(python):
    env = {"PATH": "/usr/bin:/bin", "CONDOR_CONFIG": "/dev/null"}
    p = subprocess.run([python, "-c", CHILD], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{python}: {p.stderr.strip()[-500:]}")
    return json.loads(p.stdout)


def render(data):
    version = data["version"].split()[1]
    defaults = {}
    for name, kind, is_path, value in data["defaults"]:
        defaults[name] = ("path" if is_path else KIND.get(kind, "string"), value)
    for subsys, name, kind, value in data["subsys"]:
        defaults[f"{subsys}.{name}"] = (KIND.get(kind, "string"), value)
    out = [f"# HTCondor {version} built-in configuration defaults and templates.",
           "# Generated by tools/gen_param_table.py from HTCondor's library; do not edit."]
    for name in sorted(defaults, key=str.lower):
        kind, value = defaults[name]
        out.append(f"D\t{name}\t{kind}\t{escape(value)}")
    for category, name, body in sorted((c.upper(), n.upper(), b) for c, n, b in data["metas"]):
        out.append(f"M\t{category}\t{name}\t{escape(body)}")
    return version, "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    check = "--check" in args
    pythons = [a for a in args if a != "--check"]
    if not pythons:
        sys.exit(__doc__)
    stale = False
    for python in pythons:
        version, table = render(read_table(python))
        path = os.path.join(ROOT, "src", "config", f"param_table_{version.split('.')[0]}.txt")
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        if check:
            stale |= current != table
            continue
        with open(path, "w", encoding="utf-8") as f:
            f.write(table)
        print(f"wrote {path}: HTCondor {version}, {table.count(chr(10)) - 2} entries")
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
