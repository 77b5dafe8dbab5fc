#!/usr/bin/env python3
"""Generate ClassAd fixtures from HTCondor's own ClassAd library.

Usage:  python3 -m venv /tmp/oracle && /tmp/oracle/bin/pip install -r tools/requirements.txt
        TZ=UTC /tmp/oracle/bin/python tools/classad_oracle.py tests/fixtures/classad

Writes JSON-lines files that `cargo test` checks without Python:

  eval.jsonl    {"my", "target", "expr", "value"}  -- value is HTCondor's literal
                {"my", "target", "expr", "fail": true}  -- HTCondor failed to evaluate
                {"expr", "parse_error": true}
  parse.jsonl   {"expr", "printed"} or {"expr", "parse_error": true}
  print.jsonl   {"ad", "new", "old", "json", "pretty"}
  old.jsonl     {"line", "printed"} or {"line", "parse_error": true}
  match.jsonl   {"left", "right", "symmetric", "left_rank", "right_rank"}
  time.jsonl    as eval.jsonl: the time functions from before 1970 to past 9999
  corners.jsonl as eval.jsonl: aggregates over mixed lists, substitutions
                with patterns that match the empty string
  syntax.jsonl  as parse.jsonl: where an expression may end (semicolons,
                comments), what an ad's attribute list may hold
  unresolved.jsonl as eval.jsonl: unresolved() over every kind of reference
  oldads.jsonl  {"text", "ads": [old-syntax text]} or {"text", "error": true}:
                whole old-syntax inputs as HTCondor's reader splits them

`--only NAME...` (after the directory) writes only those files.

Every case is computed by HTCondor's library (imported through htcondor2
first, so that HTCondor's own functions and default evaluation mode are in
place). Cases whose results depend on the clock, the time zone or random
numbers are not generated; run with TZ=UTC.
"""

import itertools
import json
import os
import sys

import htcondor2  # noqa: F401  (must come first: registers HTCondor's functions)
import classad2

OUT = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "--worker" else "tests/fixtures/classad"

# ---------------------------------------------------------------------------
# Values used as operands and arguments.

SCALARS = [
    "0", "1", "-1", "7", "9223372036854775807", "-9223372036854775807 - 1",
    "0.0", "-0.0", "1.0", "2.5", "-3.75", "1e300", "1e-300",
    "true", "false", "undefined", "error",
    '""', '"abc"', '"ABC"', '"a b"', '"10"', '"2.5"', '" 7x"', '"true"',
]
COMPOUND = ["{}", "{1, 2}", '{"a", "B"}', "[]", "[a = 1]"]
TIMES = ["absTime(86400)", "absTime(86400, 3600)", "relTime(90)", "relTime(-2.5)"]
VALUES = SCALARS + COMPOUND + TIMES

BINOPS = ["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "=?=", "=!=",
          "is", "isnt", "&&", "||", "&", "|", "^", "<<", ">>", ">>>"]
UNOPS = ["-", "+", "!", "~"]

SCOPE_AD = ('[a = 1; b = a + 1; s = "str"; S = "STR"; l = {1, 2, 3}; u = undefined; '
            'e = error; n = [x = 10; y = x + a; z = parent.a]; ls = {[v = 1], [v = 2], [w = 3]}; '
            'r = 2.5; t = true; f = false; c1 = c2; c2 = c1; self_ref = self_ref + 1; '
            'list_of_strings = {"x", "Y", "z"}; ref_list = {a, b, u}; '
            "'quoted name' = 5; Requirements = TARGET.mem >= 10; Rank = TARGET.mem]")
TARGET_AD = ('[mem = 20; tb = 2; a = 100; s = "target"; Requirements = MY.a == 1; '
             'Rank = 2.5; ta = a; tmy = MY.a; ttarget = TARGET.a; only_target = 7]')


def lit(expr):
    return repr(expr)


def parse(text):
    return classad2.ExprTree(text)


def simplify(expr_text, my=None, target=None):
    """HTCondor's value of expr_text: ('value', text) | ('fail',) | ('parse_error',)."""
    try:
        e = parse(expr_text)
    except Exception:
        return ("parse_error",)
    try:
        if my is None:
            r = e.simplify()
        elif target is None:
            r = e.simplify(my)
        else:
            r = e.simplify(my, target)
    except Exception:
        return ("fail",)
    return ("value", repr(r))


class Writer:
    def __init__(self, name):
        self.path = os.path.join(OUT, name)
        self.f = open(self.path, "w", encoding="utf-8")
        self.seen = set()
        self.count = 0

    def write(self, obj, key):
        if key in self.seen:
            return
        self.seen.add(key)
        self.f.write(json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n")
        self.count += 1

    def close(self):
        self.f.close()
        print(f"{self.path}: {self.count} cases")


def ad_or_none(text):
    return None if text is None else classad2.ClassAd(text)


def compute(case):
    """Runs one case in HTCondor's library (in a worker process)."""
    kind = case["kind"]
    if kind == "eval":
        my = ad_or_none(case["my"])
        target = ad_or_none(case["target"])
        r = simplify(case["expr"], my, target)
        out = {"expr": case["expr"], "my": case["my"], "target": case["target"]}
        if r[0] == "value":
            out["value"] = r[1]
        elif r[0] == "fail":
            out["fail"] = True
        else:
            out["parse_error"] = True
        return out
    if kind == "parse":
        try:
            return {"expr": case["expr"], "printed": repr(parse(case["expr"]))}
        except Exception:
            return {"expr": case["expr"], "parse_error": True}
    if kind == "print":
        ad = classad2.ClassAd(case["ad"])
        return {"ad": case["ad"], "new": repr(ad), "old": ad.printOld(), "json": ad.printJson(),
                "pretty": str(ad)}
    if kind == "old":
        line = case["line"]
        try:
            ad = classad2.parseOne(line + "\n", classad2.ParserType.Old)
            if len(list(ad.keys())) != 1:
                return {"line": line, "parse_error": True}
            name = list(ad.keys())[0]
            return {"line": line, "name": name, "printed": repr(ad.lookup(name)),
                    "old": ad.printOld()}
        except Exception:
            return {"line": line, "parse_error": True}
    if kind == "match":
        l, r = classad2.ClassAd(case["left"]), classad2.ClassAd(case["right"])
        lr = simplify("Rank", l, r)
        rr = simplify("Rank", r, l)
        return {"left": case["left"], "right": case["right"], "symmetric": bool(l.symmetricMatch(r)),
                "left_rank": lr[1] if lr[0] == "value" else None,
                "right_rank": rr[1] if rr[0] == "value" else None}
    raise ValueError(kind)


def worker():
    for line in sys.stdin:
        out = compute(json.loads(line))
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()


def run_cases(cases):
    """Computes cases in a worker process; a case that crashes HTCondor's
    library is recorded as {"crash": true} and the worker restarted."""
    import subprocess
    results = []
    i = 0
    while i < len(cases):
        proc = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                encoding="utf-8")
        try:
            while i < len(cases):
                proc.stdin.write(json.dumps(cases[i]) + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
                if not line:
                    raise BrokenPipeError
                results.append(json.loads(line))
                i += 1
        except BrokenPipeError:
            crashed = dict(cases[i])
            del crashed["kind"]
            crashed["crash"] = True
            results.append(crashed)
            i += 1
        finally:
            try:
                proc.stdin.close()
            except Exception:
                pass
            proc.wait()
    return results


class Cases:
    """Collects the cases of one file, then computes and writes them."""

    def __init__(self, name):
        self.name = name
        self.cases = []
        self.seen = set()

    def add(self, case):
        key = json.dumps(case, sort_keys=True)
        if key not in self.seen:
            self.seen.add(key)
            self.cases.append(case)

    def finish(self):
        w = Writer(self.name)
        for r in run_cases(self.cases):
            w.write(r, json.dumps(r, sort_keys=True))
        w.close()


def eval_case(w, expr, my_text=None, target_text=None):
    w.add({"kind": "eval", "expr": expr, "my": my_text, "target": target_text})


# ---------------------------------------------------------------------------
# eval.jsonl

def gen_eval():
    w = Cases("eval.jsonl")

    # Every binary operator over every pair of interesting values.
    for op in BINOPS:
        for a, b in itertools.product(VALUES, VALUES):
            eval_case(w, f"({a}) {op} ({b})")
    for op in UNOPS:
        for a in VALUES:
            eval_case(w, f"{op}({a})")

    # Integer and real corner cases.
    for e in ["9223372036854775807 + 1", "(-9223372036854775807 - 1) / -1",
              "(-9223372036854775807 - 1) % -1", "7 / 0", "7 % 0", "-7 / 2", "-7 % 2", "7 % -2",
              "1.0 / 0", "-1.0 / 0", "0.0 / 0", "1e308 * 10", "-1e308 * 10", "5.5 % 2",
              "1 << 63", "1 << 64", "1 << -1", "-8 >> 1", "-8 >> 70", "-8 >>> 1", "-8 >>> 0",
              "8 >>> 70", "-1 >> -1", "~0", "!0", "!1.5", '!"a"', "-true", "+true",
              "true + true", "true * 2.5", "1 == 1.0", "1 is 1.0", '"a" == "A"', '"a" is "A"',
              '"a" < "B"', '"B" < "a"', "undefined == undefined", "undefined is undefined",
              "error is error", "error == error", "1 < undefined", "undefined && false",
              "false && undefined", "undefined || true", "error || true", "true || error",
              "error && false", "1 && true", "0 || 0.0", '"x" && true', "true && \"x\"",
              "false || \"x\"", "undefined ?: 5", "error ?: 5", "0 ?: 5", "true ? 1 : 2",
              "0 ? 1 : 2", "2.5 ? 1 : 2", "undefined ? 1 : 2", '"s" ? 1 : 2', "{} ? 1 : 2",
              "a ? 1 : 2", "{1,2,3}[0]", "{1,2,3}[2]", "{1,2,3}[3]", "{1,2,3}[-1]",
              "{1,2,3}[4294967296]", "{1,2,3}[1.0]", "{1,2,3}[undefined]", "[a=1]['a']",
              '[a=1]["A"]', '[a=1]["b"]', "[a=1][0]", '"abc"[0]', "undefined[0]",
              "{1, 1/0}[0]", "{1, 1/0}[1]", "size({1, 1/0})", "{[a=1],[a=2]}.a",
              "{[a=1],5}.a", "{[a=1],undefined}.a", "{}.a", "5.a", "undefined.a", "error.a",
              '"x".a', "[a = 1; b = a].b", "[a = 1].b", "[x = [y = 3]].x.y"]:
        eval_case(w, e)

    # Scoping, with and without a target.
    scoped = ["a", "b", "s", "S", "l", "u", "e", "n", "n.x", "n.y", "n.z", "ls.v", "ls.w",
              "MY.a", "my.a", "SELF.a", "self.a", "TARGET.mem", "target.mem", "TARGET.a",
              "TARGET.tb", "mem", "tb", "only_target", "TARGET.ta", "TARGET.tmy",
              "TARGET.ttarget", "TARGET.only_target", "MY.mem", "other.mem", "parent.a",
              "isClassAd(parent)", "isClassAd(TARGET)", "isClassAd(MY)", "isClassAd(root)",
              "isClassAd(toplevel)", "root.a", "toplevel.a", ".a", ".mem", "c1", "c2",
              "self_ref", "isError(c1)", "c1 =?= error", "ref_list", "ref_list[0]",
              "ref_list[2]", "size(ref_list)", "'quoted name'", "[q = a].q", "[q = mem].q",
              "[q = TARGET.mem].q", "[q = parent.a].q", "n.parent.a", "Requirements",
              "Rank", "TARGET.Requirements", "TARGET.Rank", "symmetricMatch",
              "leftMatchesRight", "rightMatchesLeft", "leftRankValue", "rightRankValue",
              "LEFT.a", "RIGHT.mem", "isClassAd(lCtx)", "TARGET.TARGET.a", "TARGET.MY.a",
              "MY.TARGET.a", "a + TARGET.mem", "TARGET.s == s", "TARGET.s", "s",
              "CurrentTime > 0", "isInteger(CurrentTime)", "t && f", "t || u", "r * 2",
              "l[1] + a", "member(2, l)", "member(a, l)", "sum(l)", "l.x", "n['x']",
              "n[\"y\"]", "eval(\"a + 1\")", "eval(\"mem\")", "eval(\"TARGET.mem\")",
              "unparse(b)", "unparse(n)", "unparse(l)", "unparse(Requirements)", "unparse(zz)",
              "unparse(TARGET.mem)", "evalInEachContext(v, ls)", "countMatches(v > 1, ls)",
              "evalInEachContext(x, {n})", "countMatches(a == 1, {n, [a = 1], 3})"]
    for e in scoped:
        eval_case(w, e)
        eval_case(w, e, SCOPE_AD)
        eval_case(w, e, SCOPE_AD, TARGET_AD)

    # Deep attribute chains around HTCondor's 400-level limit.
    for n in [10, 398, 399, 400, 401]:
        chain = "[" + "; ".join(f"x{i} = x{i+1}" for i in range(n)) + f"; x{n} = 7]"
        eval_case(w, "x0", chain)

    for expr in gen_function_cases():
        eval_case(w, expr)
        eval_case(w, expr, SCOPE_AD)

    for expr in FUNCTIONAL:
        eval_case(w, expr)

    # Matchmaking scopes: names reached through TARGET, the alternate scope
    # and nested ads, from both sides.
    for e in MATCH_SCOPE_EXPRS:
        eval_case(w, e, JOB_AD, SLOT_AD)
        eval_case(w, e, SLOT_AD, JOB_AD)
        eval_case(w, e, JOB_AD)

    w.finish()


def gen_function_cases():
    """Calls of every builtin: normal, edge and wrong-type arguments."""
    v = ["undefined", "error", "1", "2.5", '"abc"', "true", "{1, 2}", "[a = 1]",
         "relTime(60)", "absTime(60)"]
    out = []
    one = ["isUndefined", "isError", "isString", "isInteger", "isReal", "isList",
           "isClassAd", "isBoolean", "isAbstime", "isReltime", "int", "real", "string", "bool",
           "floor", "ceiling", "ceil", "round", "toUpper", "toLower", "size", "sum", "avg",
           "min", "max", "split", "splitUserName", "splitSlotName", "stringListSize",
           "stringListSum", "stringListAvg", "stringListMin", "stringListMax", "interval",
           "envV1ToV2", "argsToList", "listToArgs", "getYear", "getMonth", "getDayOfYear",
           "getDayOfMonth", "getDayOfWeek", "getDays", "getHours", "getMinutes", "getSeconds",
           "eval", "debug", "relTime", "absTime", "mergeEnvironment", "nosuchfunction"]
    for f in one:
        if f != "absTime":  # absTime() is the current time
            out.append(f"{f}()")
        for a in v:
            out.append(f"{f}({a})")
        out.append(f"{f}(1, 2, 3)")
    two = ["strcmp", "stricmp", "versioncmp", "versionLT", "versionLE", "versionGT", "versionGE",
           "versionEQ", "versionlt", "member", "identicalMember", "pow", "quantize", "regexp",
           "regexpMember", "stringListMember", "stringListIMember", "stringListSubsetMatch",
           "stringListISubsetMatch", "stringListsIntersect", "stringList_regexpMember", "join",
           "strcat", "split", "substr", "absTime", "relTime", "formatTime", "userMap"]
    for f in two:
        for a, b in itertools.product(v, v):
            out.append(f"{f}({a}, {b})")
    out += [
        # strings
        'strcat("a", "b", 1, 2.5, true, {1}, [b = 1])', 'strcat("a", undefined, error)',
        'strcat(error, undefined)', 'join(",", "a", "b")', 'join(", ", {"a", "b", 3})',
        'join({"a", undefined, "b"})', 'join(",", undefined, "b")', 'join(";")', 'join()',
        'join(undefined)', 'join(undefined, {"a","b"})', 'join(",", error)',
        'toUpper("MiXeD 123 é")', 'toLower("MiXeD")',
        'substr("hello", 0)', 'substr("hello", 2)', 'substr("hello", 5)', 'substr("hello", 6)',
        'substr("hello", -2)', 'substr("hello", -7)', 'substr("hello", 1, 2)',
        'substr("hello", 1, 0)', 'substr("hello", 1, -1)', 'substr("hello", 1, -10)',
        'substr("hello", 1, 100)', 'substr("hello", -3, 2)', 'substr("hello", 2, -1)',
        'substr("", 0)', 'substr("hello", 1, undefined)', 'substr("hello", "1")',
        'strcmp("abc", "abd")', 'strcmp("b", "a")', 'strcmp("A", "a")', 'stricmp("A", "a")',
        'strcmp(10, 9)', 'stricmp("x", 1.5)',
        'versioncmp("1.2.3", "1.2.10")', 'versioncmp("000", "00")', 'versioncmp("01", "010")',
        'versioncmp("09", "0")', 'versioncmp("9", "10")', 'versioncmp("a", "b")',
        'versioncmp("7.x", "7.y")', 'versioncmp("abc", "abc")', 'versioncmp("1.0a", "1.0")',
        'versionGT("8.9.10", "8.9.9")', 'versionLE("8.9", "8.9")', 'versionEQ("1", "01")',
        'version_in_range("1.5", "1.0", "2.0")', 'version_in_range("2.5", "1.0", "2.0")',
        'version_in_range("1.0", "1.0", "1.0")', 'version_in_range(undefined, "1", "2")',
        'version_in_range("1", undefined, "2")', 'version_in_range(1, 0, 2)',
        'split("a b c")', 'split("a, b,c")', 'split("a,,b")', 'split(",a,")', 'split("  ")',
        'split("")', 'split("a|b|c", "|")', 'split("a||b", "|")', 'split("a b", "")',
        'split("a \\t b")', 'split("a;b c", "; ")',
        'splitUserName("user@domain")', 'splitUserName("user")', 'splitUserName("@x")',
        'splitUserName("a@b@c")', 'splitSlotName("slot1@host")', 'splitSlotName("host")',
        'splitSlotName("slot1_2@a@b")',
        # lists
        'member(1, {1, 2})', 'member(3, {1, 2})', 'member("A", {"a"})', 'member(1, {1.0})',
        'member(1, {true})', 'member(undefined, {undefined})', 'member(error, {error})',
        'member(1, {undefined, 1})', 'member(1, {error, 1})', 'member(1, {"1"})',
        'identicalMember(1, {1.0, 1})', 'identicalMember("A", {"a", "A"})',
        'identicalMember(undefined, {undefined})', 'identicalMember(error, {error})',
        'identicalMember(1, {undefined})', 'member({1}, {{1}})', 'member([a=1], {})',
        'size({})', 'size({1, 2, 3})', 'size("")', 'size("héllo")', 'size([a = 1; b = 2])',
        'size([])', 'sum({})', 'sum({1, 2, 3})', 'sum({1, 2.5})', 'sum({1, undefined, 2})',
        'sum({undefined})', 'sum({1, "a"})', 'sum({true, 1})', 'sum({1, error})',
        'sum({9223372036854775807, 1})', 'avg({})', 'avg({1, 2})', 'avg({1, 2, 4})',
        'avg({undefined})', 'avg({2, undefined})', 'avg({1.5, 2.5})', 'avg({"x"})',
        'min({})', 'min({3, 1, 2})', 'min({3, 1.5})', 'min({1, "a"})', 'min({undefined})',
        'min({undefined, 4})', 'max({3, 1, 2})', 'max({1, true})', 'max({true, 0})',
        'max({-1, -2.5})', 'max({1, error})',
        'anyCompare("<", {1, 2, 3}, 2)', 'anyCompare(">", {1, 2, 3}, 5)',
        'allCompare("<", {1, 2, 3}, 4)', 'allCompare("<", {1, 2, 3}, 3)',
        'anyCompare("==", {"a", "b"}, "A")', 'anyCompare("is", {"a", "b"}, "A")',
        'anyCompare("isnt", {1, 2}, 1)', 'allCompare("!=", {1, 2}, 3)',
        'anyCompare("<=", {}, 1)', 'allCompare("<=", {}, 1)', 'anyCompare("==", {undefined, 1}, 1)',
        'allCompare("==", {1, undefined}, 1)', 'anyCompare("==", {1, undefined}, 2)',
        'anyCompare("<", {"a"}, 1)', 'anyCompare("=?=", {1}, 1)', 'anyCompare(undefined, {1}, 1)',
        'anyCompare("<", undefined, 1)', 'anyCompare("<", 5, 1)', 'anyCompare("<", {1}, undefined)',
        'anyCompare(1, {1}, 1)', 'allCompare(">=", {2, 3}, 2)',
        'evalInEachContext(x, {[x = 1], [x = 2]})', 'evalInEachContext(x + 1, {[x = 1], [y = 2]})',
        'evalInEachContext(x, {[x = 1], 5})', 'evalInEachContext(x, undefined)',
        'evalInEachContext(x, {})', 'evalInEachContext(x, 5)',
        'countMatches(x > 1, {[x = 1], [x = 2], [x = 3]})', 'countMatches(x, {[x = 1], 7})',
        'countMatches(x > 1, undefined)', 'countMatches(x > 1, 5)', 'countMatches(x, {[x = true]})',
        # conversions
        'int(3.7)', 'int(-3.7)', 'int("42")', 'int("  42abc")', 'int("abc")', 'int("")',
        'int("1e3")', 'int("0x1F")', 'int("-7.9")', 'int(1e30)', 'int(-1e30)', 'int("inf")',
        'int(true)', 'int(false)', 'int(relTime(5.7))', 'int(absTime(100, 60))',
        'real(3)', 'real("2.5e2")', 'real("nan")', 'real("-inf")', 'real("x")', 'real(true)',
        'real(relTime(1.5))', 'real(absTime(7))', 'real("0x10")', 'real(".5")',
        'string(3)', 'string(-0.0)', 'string(1e100)', 'string(true)', 'string({1, "a", [b = 2]})',
        'string([z = 1; a = "x"])', 'string(relTime(3700))', 'string(relTime(-61))',
        'string(absTime(0))', 'string(absTime(86400, -18000))', 'string("q\\"uote")',
        'bool(1)', 'bool(0)', 'bool(0.0)', 'bool(-2.5)', 'bool("TRUE")', 'bool("False")',
        'bool("yes")', 'bool("")', 'bool(relTime(0))', 'bool(relTime(1))', 'bool(absTime(0))',
        'ifThenElse(true, 1, 1/0)', 'ifThenElse(false, 1/0, 2)', 'ifThenElse(undefined, 1, 2)',
        'ifThenElse(error, 1, 2)', 'ifThenElse("x", 1, 2)', 'ifThenElse(0, 1, 2)',
        'ifThenElse(3.5, 1, 2)', 'ifThenElse({}, 1, 2)', 'ifThenElse(1, 2)',
        'ifThenElse(1, 2, 3, 4)', 'ifThenElse(relTime(1), 1, 2)',
        'eval("1 + 2")', 'eval("1 +")', 'eval(1)', 'eval(undefined)', 'eval("undefined")',
        'eval("{1, 2}")', 'eval("\\"s\\"")', 'eval(strcat("1", "+", "1"))',
        # math
        'floor(2.5)', 'floor(-2.5)', 'floor(7)', 'floor("3.9")', 'floor("x")', 'ceiling(2.1)',
        'ceiling(-2.1)', 'ceil(2.0)', 'round(2.5)', 'round(3.5)', 'round(-2.5)', 'round(-3.5)',
        'round(2.4999)', 'round(1e30)', 'round(-1e30)', 'floor(real("nan"))',
        'pow(2, 10)', 'pow(2, 0)', 'pow(0, 0)', 'pow(2, -1)', 'pow(-2, 3)', 'pow(2.0, 3)',
        'pow(2, 0.5)', 'pow(-8, 0.5)', 'pow(10, 18)', 'pow(10, 19)', 'pow(2, 63)', 'pow(3, 40)',
        'pow("2", 3)', 'pow(2, "x")', 'pow(undefined, 2)', 'pow(2)',
        'quantize(3, 8)', 'quantize(3, 2)', 'quantize(0, 4)', 'quantize(1.5, 6.8)',
        'quantize(6.8, 1.2)', 'quantize(10, 5.1)', 'quantize(0, {4})', 'quantize(2, {1, 2, "A"})',
        'quantize(3, {1, 2, 0.5})', 'quantize(2.7, {1, 2, 0.5})', 'quantize(3, {1, 2, "A"})',
        'quantize(5, {})', 'quantize(5, 0)', 'quantize(5, 0.0)', 'quantize(-3, 2)',
        'quantize(-3.5, 2)', 'quantize(7, 2.5)', 'quantize("7", 4)', 'quantize(undefined, 2)',
        'quantize(3, undefined)', 'quantize(3, {undefined})', 'quantize(9, {4, 8})',
        'quantize(100, {1024})', 'quantize(2049, {1024})', 'quantize(true, 4)',
        'random(0)', 'random("x")', 'random(1, 2)', 'random(undefined)',
        # time (zone-independent forms)
        'interval(0)', 'interval(5)', 'interval(60)', 'interval(67)', 'interval(3600)',
        'interval(86400)', 'interval(1472523)', 'interval(-67)', 'interval(-90061)',
        'interval(2.9)', 'interval("90")', 'interval(true)',
        'absTime(0, 0)', 'absTime(1000, 3600)', 'absTime(1000, -3600)', 'absTime(1000, 1.5)',
        'absTime(1000.9, 60)', 'absTime(1000, relTime(120))', 'absTime(1000, "x")',
        'absTime(relTime(100), 0)', 'absTime(absTime(5, 60))', 'absTime(true, 0)',
        'absTime("x", 5)', 'relTime(5)', 'relTime(-5)', 'relTime(2.75)', 'relTime(90061)',
        'relTime(-90061)', 'relTime(0)', 'relTime(5, 1)', 'relTime(absTime(100, 0))',
        'relTime(relTime(7))', 'relTime(true)',
        'absTime("2020-01-01T00:00:00Z")', 'absTime("2020-01-01T00:00:00+01:30")',
        'absTime("2020-01-01T12:34:56-05:00")', 'absTime("2020-06-15 10:20:30 +0200")',
        'absTime("2020-02-30T12:00:00Z")', 'absTime("2020Z")', 'absTime("2020-01-01Z")',
        'absTime("garbage")', 'absTime("20200101T000000Z")', 'absTime("1969-12-31T23:59:59Z")',
        'relTime("1:00")', 'relTime("1+00:00:00")', 'relTime("2+03:04:05.5")', 'relTime("-1:00")',
        # fields past a C int, and int arithmetic that wraps
        'relTime("2147483648:00:00")', 'relTime("2147483647:00:00")', 'relTime("4294967296:00:00")',
        'relTime("2147483648d")', 'relTime("5:2147483648:00")', 'relTime("2147483648:30")',
        'relTime("35791395:00")', 'relTime("35791395:00:00")', 'relTime("596524:00:00")',
        'relTime("24856d")', 'relTime("99999999999:00")', 'relTime("3000000000d")',
        'relTime("2147483648")', 'relTime("-2147483648")', 'relTime("3000000000.25")',
        'relTime("8888888888888888888888888888888888888888888881:00")',
        # years before 1000 print unpadded
        'absTime("20x0")', 'absTime("0000")', 'absTime("0001")', 'absTime("0999-06-01")',
        'absTime("2mee")',
        'relTime("1d2h3m4s")', 'relTime(" 5 ")', 'relTime("")', 'relTime("x")', 'relTime("90")',
        'relTime("1:2:3")', 'relTime("5.25")',
        'relTime("1:00") + relTime(5)', 'absTime(0, 0) - absTime(10, 0)',
        'absTime(100, 0) + relTime(10.9)', 'relTime(10.9) + absTime(100, 0)',
        'absTime(100, 0) - relTime(10)', 'relTime(5) * 2', 'relTime(5) / 2', '2 * relTime(5)',
        '2.5 * relTime(4)', 'relTime(5) * 2.5', 'relTime(5) / 2.5', 'relTime(5) * relTime(2)',
        'relTime(5) - relTime(7)', 'absTime(5, 0) == absTime(5, 100)',
        'absTime(5, 0) is absTime(5, 100)', 'absTime(5, 0) < absTime(6, 0)',
        'absTime(5, 0) < 6', 'relTime(5) < relTime(6)', 'relTime(5) == 5',
        'getDays(relTime(200000))', 'getHours(relTime(200000))', 'getMinutes(relTime(200000))',
        'getSeconds(relTime(200000))', 'getYear(relTime(5))', 'getDays(absTime(0, 0))',
        'splitTime(relTime(-90061.5)).Days', 'splitTime(relTime(-90061.5)).Seconds',
        'splitTime(relTime(61)).Minutes', 'splitTime(relTime(-5)).Seconds',
        'splitTime(absTime(1600000000, 3600)).Hours', 'splitTime(absTime(1600000000, 3600)).Offset',
        'splitTime(absTime(1600000000, 0)).Type', 'splitTime(relTime(1)).Type',
        'splitTime("x")', 'splitTime([a = 1])', 'splitTime(undefined)', 'size(splitTime(relTime(1)))',
        'formatTime(absTime(1600000000, 0), "%Y-%m-%d %H:%M:%S")',
        'formatTime(absTime(1600000000, 3600), "%H:%M %z")',
        'formatTime(absTime(1600000000, 0), "%a %A %b %B %d %e %j %p %U %w %W %y %%")',
        'formatTime(absTime(1600000000, 0), "%D %F %T %R %r %u %V %G %g %C %k %l %I")',
        'formatTime(absTime(1600000000, 0), "%c")', 'formatTime(absTime(1600000000, 0), "%x %X")',
        'formatTime(absTime(1600000000, 0), "%Q %E")', 'formatTime(absTime(1600000000, 0), 5)',
        'formatTime(relTime(5), "%Y")', 'formatTime(undefined)', 'formatTime("x")',
        'formatTime([Year = 2020; Month = 2; Day = 3], "%Y-%m-%d %a %j")',
        'formatTime([Year = 2021], "%Y %m %d")', 'formatTime(absTime(1, 0), "%Y", 3)',
        # regular expressions
        'regexp("a+", "caab")', 'regexp("^a", "ba")', 'regexp("A", "a")', 'regexp("A", "a", "i")',
        'regexp("A", "a", "I")', 'regexp("^b$", "a\\nb")', 'regexp("^b$", "a\\nb", "m")',
        'regexp("a.b", "a\\nb")', 'regexp("a.b", "a\\nb", "s")', 'regexp("a b", "ab", "x")',
        'regexp("(", "a")', 'regexp("a", undefined)', 'regexp(undefined, error)',
        'regexp("a", "a", undefined)', 'regexp("a", "a", 1)', 'regexp("\\\\d+", "x42")',
        'regexp("(?i)abc", "ABC")', 'regexp("a{2}", "caab")', 'regexp("(a)\\\\1", "aa")',
        'regexp("é", "café")', 'regexp("a", "a", "q")',
        'regexpMember("a", {"b", "ca"})', 'regexpMember("a", {"b", "c"})',
        'regexpMember("a", {"b", undefined})', 'regexpMember("a", {"a", undefined})',
        'regexpMember("a", {"b", 1})', 'regexpMember("a", {})', 'regexpMember("a", "a")',
        'regexpMember("(", {"a"})', 'regexpMember("A", {"a"}, "i")',
        'regexps("a(b)c", "xabcx", "[\\\\1]")', 'regexps("a(b)c", "xabcx", "[\\\\1]", "f")',
        'regexps("a(b)c", "xyz", "[\\\\1]")', 'regexps("a(b)c", "xyz", "[\\\\1]", "f")',
        'regexps("a(b)c", "xabcx", "[\\\\2]")', 'regexps("(a)|(b)", "b", "[\\\\1|\\\\2]")',
        'regexps("a", "a", "\\\\n\\\\\\\\")', 'regexps("x*", "abc", "-")', 'regexps("b", "abcb", "X", "g")',
        'regexps("b", "abcb", "X", "fg")', 'regexps("B", "abcb", "X", "fgi")',
        'replace("b", "abcb", "X")', 'replace("x", "abc", "X")', 'replace("x*", "abc", "-")',
        'replace("(b)(c)", "abcd", "\\\\2\\\\1")', 'replace("a", "aaa", "\\\\0\\\\0")',
        'replaceall("b", "abcb", "X")', 'replaceall("", "abc", "-")', 'replaceall("x*", "abc", "-")',
        'replaceall("[0-9]+", "a1b22c333", "<\\\\0>")', 'replaceall("B", "abcb", "X", "i")',
        'replaceall("(", "a", "b")', 'replace(1, "a", "b")', 'replace("a", "a", undefined)',
        # string lists
        'stringListSize("a, b, c")', 'stringListSize("a,,b")', 'stringListSize("")',
        'stringListSize("  ")', 'stringListSize("a;b;c", ";")', 'stringListSize("a b", ";")',
        'stringListSize(undefined)', 'stringListSize("a", undefined)',
        'stringListSum("1, 2, 3")', 'stringListSum("1, 2.5")', 'stringListSum("")',
        'stringListSum("1, x")', 'stringListSum("1e2")', 'stringListSum("-1 +2")',
        'stringListAvg("1, 2")', 'stringListAvg("1, 2, 4")', 'stringListAvg("1.0, 2")',
        'stringListAvg("")', 'stringListMin("3, 1, 2")', 'stringListMin("")',
        'stringListMin("-5, 2")', 'stringListMax("3, 1, 2")', 'stringListMax("-1, -5")',
        'stringListMax("1e2, 3")', 'stringListMax("a")', 'stringListMin("1;2", ";")',
        'stringListMember("b", "a, b, c")', 'stringListMember("B", "a, b, c")',
        'stringListIMember("B", "a, b, c")', 'stringListMember("b", "a;b;c", ";")',
        'stringListMember("a b", "a b, c")', 'stringListMember("", "a,,b")',
        'stringListMember("b", undefined)', 'stringListMember(undefined, "a")',
        'stringListMember(undefined, undefined)', 'stringListMember(1, "1")',
        'stringListMember("a", "a", 1)', 'stringListMember("x", "a\\tx\\ny")',
        'stringListSubsetMatch("a, b", "a, b, c")', 'stringListSubsetMatch("a, d", "a, b, c")',
        'stringListSubsetMatch("", "a")', 'stringListSubsetMatch(undefined, "a")',
        'stringListSubsetMatch("a", undefined)', 'stringListSubsetMatch(undefined, undefined)',
        'stringListSubsetMatch("A", "a, b")', 'stringListISubsetMatch("A, B", "a, b")',
        'stringListSubsetMatch("a,,a", "a")', 'stringListSubsetMatch("a;b", "a;b;c", ";")',
        'stringListsIntersect("a, b", "c, b")', 'stringListsIntersect("a, b", "c, d")',
        'stringListsIntersect("a", undefined)', 'stringListsIntersect("a b", "b", ";")',
        'stringListsIntersect("a;b", "b", ";")', 'stringListsIntersect("", "")',
        'stringListsIntersect("A", "a")', 'stringListsIntersect(1, "1")',
        'stringListsIntersect("a", "a", "")',
        'stringList_regexpMember("^a", "xa, ab")', 'stringList_regexpMember("^a", "xa, ba")',
        'stringList_regexpMember("^a", "")', 'stringList_regexpMember("(", "a")',
        'stringList_regexpMember("^A", "ab", ", ", "i")', 'stringList_regexpMember("^a", "x;ab", ";")',
        'stringList_regexpMember("a", undefined)',
        # environment and arguments
        'envV1ToV2("A=1;B=2")', 'envV1ToV2("|A=1|B=x;y")', 'envV1ToV2("A=has space;B=q\'t")',
        'envV1ToV2("NOEQUALS")', 'envV1ToV2("")', 'envV1ToV2(undefined)', 'envV1ToV2(5)',
        'mergeEnvironment("A=1", "B=2 A=3")', 'mergeEnvironment("B=1", "A=2")',
        'mergeEnvironment(undefined, "A=1")', 'mergeEnvironment()', 'mergeEnvironment("A=1", 5)',
        "mergeEnvironment(\"A='x y'\", \"B=2\")", 'mergeEnvironment("BAD")',
        'listToArgs({"a", "b c", "it\'s", ""})', 'listToArgs({"a", "b"}, 1)',
        'listToArgs({"a", "b c"}, 1)', 'listToArgs({"a", 1})', 'listToArgs("a")',
        'listToArgs({"a"}, 3)', 'argsToList("a \'b c\' d")', 'argsToList("a \'b\'\'c\'")',
        'argsToList("a \'b")', 'argsToList("a b", 1)', 'argsToList("  a   b  ")', 'argsToList("")',
        'argsToList(5)', 'argsToList("a", 2)',
        'userMap("m", "u")', 'userMap("m", "u", "g")', 'userMap("m", "u", "g", "def")',
        'userMap(undefined, "u")', 'userMap(error, "u")',
        # misc
        'debug(1 + 1)', 'debug()', 'unparse(1)', 'unparse()', 'unresolved(nosuch)',
        'nosuchfunction()', 'NOSUCH(1, 2)', 'IsUndefined(x)', 'ISERROR(error)',
        'StrCat("a", "b")', 'STRINGLISTMEMBER("a", "a")',
    ]
    return out


# Expressions in the style of HTCondor's functional tests (values come from
# the oracle).
_X = ('[a = 1; b = 2.0; c = "alain"; d = true; atime = absTime("2004-01-01"); '
      'rtime = relTime("2+25:14:16.123"); l = {1, 1, 2, 3, 5}; e = error; u = undefined]')
_L = ('{[a = 3; b = "I see London"], [a = 2; b = "I see France"], '
      '[a = 1; b = "I see funky pants"]}')
FUNCTIONAL = [
    "(1 + 2)", "(3 - 1)", "(2 * 3)", "(8 / 2)", 'string(real("INF"))', 'string(real("-INF"))',
    'string(real("NaN"))', 'real("NaN") is real("NaN")', 'real("INF") is real("INF")',
    "0.0 is -(0.0)", '0.0 is real("-0.0")', "string(0.0)", "string(-0.0)",
] + [f"{_X}.{f}" for f in ["a", "b", "c", "d", "atime", "rtime", "l", "e", "u"]] + [
    f"{_X}.l[4]", f"isinteger({_X}.a)", f"isreal({_X}.b)", f"isstring({_X}.c)",
    f"isboolean({_X}.d)", f"isabstime({_X}.atime)", f"isreltime({_X}.rtime)",
    f"islist({_X}.l)", f"iserror({_X}.e)", f"isundefined({_X}.u)", f"{_L}.a", f"{_L}.b",
    f"{_L}.c", '[a = 3; b = "alain"; ab = 4]["a"]', '[a = 3; b = "alain"; ab = 4]["c"]',
    '[a = 3; b = "alain"; ab = 4][strcat("a", "b")]', '{"a", "b", "c"}[3]',
    "[;; a = 3;; b = 4;;]", 'int(absTime("1970-01-01T:00:00:01Z"))', 'int(reltime("01:00:01"))',
    'real(absTime("1970-01-01T:00:00:01Z"))', 'real(reltime("01:00:01"))',
    'strcat(14, " bottles")', 'substr("abcde", 4, 2)', 'tolower(true)', 'toupper(true)',
    'regexp("Alain.*Roy", "Alain Aslag Roy")', 'regexp("alain.*roy", "Alain Aslag Roy", "i")',
    'regexpMember("b.*", {"aa", "bb"})', 'regexpMember("b.*", {1, "bb"})',
] + [f'splitTime(absTime("1970-01-02T:03:04:05{z}")).{f}'
     for z in ["Z", "-06:00"] for f in ["year", "month", "day", "hours", "minutes", "seconds", "offset"]
] + [f'splitTime(relTime("1d2h3m4.5s")).{f}' for f in ["days", "hours", "minutes", "seconds"]] + [
    'formatTime(absTime("1997-08-30T16:04:05-0500"), "%m %d %Y")',
    'formatTime(absTime("1997-08-30T16:04:05-0500"), "%H %M %S %A %a %B %b")',
    'formatTime(splitTime(absTime("1997-08-30T16:04:05-0500")), "%H:%M:%S")',
    'formatTime(absTime("1997-08-30T16:04:05-0500"))',
    "sum({})", "avg({})", "min({})", "max({})", 'anycompare("<", {}, 3)', 'allcompare("<", {}, 3)',
    "sum({1})", "avg({1})", "min({1})", "max({1})", "sum({1, 2, 3, 4, 5})", "avg({1, 2, 3, 4, 5})",
    "ifThenElse(1+1==2, 3, 4)", "ifThenElse(ERROR,3,4)", "ifThenElse(UNDEFINED,3,4)",
    "interval(3600*24*4 + 3600*3 + 60*2 + 1)",
    'regexps("[abc]*([def]*)[ghi]*","aaaabbbbcccccdddeeefffggghhhiii","\\1")',
    'regexps("[abc]*([def]*)[ghi]*","abcdefghi","\\0")',
    'regexps("[abc]*([def]*)[ghi]*","abcdefghi","\\2")', 'regexps("[abc]*([def]*)[ghi]*","NO","\\0")',
    'eval(1+1)', '[ A = 1; B = 2; C = eval("A+B") ].C',
] + [f"{a} {op} {b}" for op in ["&&", "||"]
     for a in ["false", "true", "undefined", "error"] for b in ["false", "true", "undefined", "error"]
] + [f"{c} ? {a} : {b}" for c in ["false", "true"] for a, b in
     [("true", "false"), ("false", "true"), ("true", "undefined"), ("undefined", "true")]]

JOB_AD = ('[Owner = "alice"; RequestMemory = 2048; RequestCpus = 2; Cmd = "/bin/true"; '
          'ImageSize = 1000; Requirements = TARGET.Memory >= RequestMemory && Arch == "X86_64"; '
          'Rank = Memory + KFlops / 1000; MyPrio = 5; RequireGPUs = Capability > 4; '
          'Nested = [n1 = RequestCpus; n2 = TARGET.Cpus; n3 = Cpus; n4 = parent.Owner]]')
SLOT_AD = ('[Name = "slot1@host"; Memory = 4096; Cpus = 4; Arch = "X86_64"; KFlops = 2000000; '
           'Start = TARGET.RequestMemory <= Memory; Requirements = START; Rank = MyPrio; '
           'AvailableGPUs = {GPU_a, GPU_b}; GPU_a = [Capability = 3.5; Id = "a"]; '
           'GPU_b = [Capability = 7.0; Id = "b"]; Owner = "slotowner"]')
MATCH_SCOPE_EXPRS = [
    "Requirements", "Rank", "Start", "START", "TARGET.Requirements", "TARGET.Rank", "Owner",
    "TARGET.Owner", "MY.Owner", "Memory", "RequestMemory", "TARGET.Memory", "MyPrio",
    "Nested.n1", "Nested.n2", "Nested.n3", "Nested.n4", "Nested", "TARGET.Nested.n1",
    "countMatches(RequireGPUs, AvailableGPUs)", "countMatches(Capability > 4, AvailableGPUs)",
    "countMatches(MY.RequireGPUs, TARGET.AvailableGPUs)",
    "evalInEachContext(Capability, AvailableGPUs)", "evalInEachContext(Id, TARGET.AvailableGPUs)",
    "AvailableGPUs", "size(AvailableGPUs)", "GPU_a.Capability", "TARGET.GPU_b.Id",
    "symmetricMatch", "leftMatchesRight", "rightMatchesLeft", "leftRankValue", "rightRankValue",
    "unparse(Requirements)", "unparse(Start)", "isUndefined(TARGET)", "TARGET.TARGET.Owner",
    "strcat(Owner, TARGET.Owner)", "ifThenElse(Memory > 1000, Owner, \"none\")",
    "[x = Owner].x", "[x = TARGET.Owner].x", "[x = Memory; y = x * 2].y",
]

# ---------------------------------------------------------------------------
# parse.jsonl: what parses, and how HTCondor prints it.

PARSE_CASES = [
    "0", "7", "-7", "- 7", "--7", "-(7)", "+7", "017", "00", "0x10", "08", "09.5", "0.5", ".5",
    "5.", "5.e3", "1e3", "1E3", "1e+3", "1e-3", "1e", "1e+", "1.5e300", "1e400", "-1e400",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "99999999999999999999", "10K", "1.5M", "2k+1",
    '"abc"', '"a\\"b"', '"a\\\\b"', '"a\\nb"', '"a\\tb"', '"\\a\\b\\f\\r\\v"', '"\\x41"',
    '"\\101"', '"\\1" "23"', '"\\0"', '"a" "b"', '"a"  \n "b"', '"a" /* c */ "b"', "'a b'",
    "'a' 'b'", '"\\q"', '"\\?"', '"\\\'"', '"é"', '"\\303\\251"', '"unterminated', "'unterminated",
    "true", "TRUE", "True", "false", "undefined", "UNDEFINED", "error", "Error", "is", "isnt",
    "a is b", "a isnt b", "a =?= b", "a =!= b", "a =! b", "a =? b", "a == b", "a != b",
    "a<b", "a<=b", "a>b", "a>=b", "a<<b", "a>>b", "a>>>b", "a&b", "a|b", "a^b", "a&&b",
    "a||b", "!a", "~a", "-a", "+a", "a+b*c", "(a+b)*c", "a*(b+c)", "a-b-c", "a-(b-c)",
    "a/b/c", "a%b", "a ? b : c", "a ? b : c ? d : e", "(a ? b : c) ? d : e", "a ?: b",
    "a ? : b", "a ?: b ?: c", "a || b ? c : d", "a ? b || c : d", "a ?", "a ? b", "a ? b :",
    "a.b", "a.b.c", "a .b", "a. b", "a.1", "a.true", "a.'b c'", ".a", ".'b c'", ". a",
    "a[0]", "a[0][1]", "a[b[c]]", "a[]", "a.b[c].d", "(a).b", "f()", "f(1)", "f(1, 2)",
    "f(1; 2)", "f(1,)", "f(,1)", "f(1 2)", "F(x)", "f(g(h(1)))", "{}", "{1}", "{1, 2}",
    "{1, 2,}", "{,1}", "{1 2}", "{{1}, {2, {3}}}", "[]", "[a = 1]", "[a = 1;]", "[;a = 1]",
    "[a = 1;; b = 2]", "[a = 1 b = 2]", "[a = 1, b = 2]", "[a 1]", "[= 1]", "[1 = 1]",
    "[true = 1]", "['true' = 1]", "[a = 1; A = 2]", "[a = [b = [c = 1]]]", "[a = {1, [b = 2]}]",
    "// comment\n1", "1 // comment", "/* c */ 1", "1 /* c */", "/* unterminated", "1 /",
    "", "   ", "1 2", "1 ? 2 : 3 4", "(1", "1)", "[a = 1", "{1", "1 +", "* 1", "a..b", "a b",
    "@", "$x", "a#b", "\x01", "é", "1 + é",
    "absTime(\"2020-01-01T00:00:00Z\")", "absTime(\"garbage\")", "absTime(0)", "absTime(\"x\", 1)",
    "relTime(\"1:00\")", "relTime(\"garbage\")", "relTime(60)", "ABSTIME(\"2020-01-01Z\")",
    "reltime(\"5\")", "absTime(\"2020\")", "relTime(\"\")",
    "MY.a", "TARGET.a", "my.a", "target.a", "PARENT.a", "a.MY", "MY", "TARGET",
    "x =?= (y)", "((((1))))", "a+-b", "a - -b", "a--b", "a-b", "a -b", "a- b", "3-5", "3 -5",
    "a+-5", "(a)-5", "f(-5)", "{-5}", "[a=-5]", "a[-5]", "true-5", "\"s\"-5", "undefined-5",
]


def gen_parse():
    w = Cases("parse.jsonl")
    cases = list(PARSE_CASES)
    for n in [998, 999, 1000, 1001]:
        cases.append("(" * n + "1" + ")" * n)
        cases.append("{" * n + "}" * n)
        cases.append("true ? 1 : " * n + "2")
    for text in cases:
        w.add({"kind": "parse", "expr": text})
    w.finish()


# ---------------------------------------------------------------------------
# print.jsonl: printing ads in every format.

PRINT_ADS = [
    "[]",
    "[a = 1]",
    '[b = 1; A = 2; a_x = 3; Zeta = 4; zz = 5; _u = 6; B2 = 7; ab = 8; AA = 9]',
    "['foo bar' = 10; 'if' = 11; 'true' = 12; x = 'foo bar'; y = 'true'; 'q\\'q' = 1]",
    '[i = 5; r1 = 1.0; r2 = 2.5; r3 = 1e20; r4 = 0.1; r5 = -0.0; r6 = 1e-5; '
    'r7 = 123456789012345678.0; nan = real("NaN"); inf = real("INF"); ninf = real("-INF")]',
    '[s1 = "a/b"; s2 = "tab\\there"; s3 = "é"; s4 = "\\001x"; s5 = "q\'q"; s6 = "q\\"q"; '
    's7 = "back\\\\slash"; s8 = "nl\\nnl"; s9 = ""; s10 = "\\177~"]',
    "[b = true; c = false; u = undefined; e = error]",
    "[l = {}; m = {1}; n = {1, 2.5, \"s\", {}, [a = 1], x, undefined}]",
    "[ad = []; nad = [ z = 1; y = {1, [q = 2]} ]; deep = [a = [b = [c = 1]]]]",
    '[t = absTime("2020-01-01T00:00:00Z"); t2 = absTime("2020-01-01T00:00:00+05:30"); '
    'rt = relTime(65); rl = relTime("1+02:03:04"); rf = relTime("5.5")]',
    "[x = a + 1; y = a =?= b; z = a =!= b; w = !a; v = -a; u2 = a ? b : c; q = a ?: b; "
    "p = (a + b) * c; o = f(1, 2); n2 = a.b.c; m2 = a[1]; k = .abs; j = 'a b'.c]",
    "[Requirements = TARGET.Memory >= RequestMemory && (Arch == \"X86_64\"); "
    "Rank = 0.0; START = KeyboardIdle > 15 * 60 || TotalTimeUnclaimedIdle > 600]",
    "[a = {[b = {[c = 1]}]}; e2 = {{}, {{}}}]",
]


def gen_print():
    w = Cases("print.jsonl")
    for text in PRINT_ADS:
        w.add({"kind": "print", "ad": text})
    w.finish()


# ---------------------------------------------------------------------------
# old.jsonl: old-syntax attribute lines as hooks print them.

OLD_LINES = [
    "A = 1", "A=1", "  A = 1", "A = 1   ", "A = \"x\"", 'A = "C:\\dir\\"', 'A = "C:\\dir\\" ',
    'A = "say \\"hi\\" now"', 'A = "back\\\\slash"', 'A = "tab\\there"', 'A = "\\n"',
    'A = "a" "b"', "A = 1.5", "A = 1e10", "A = 017", "A = 0x10", "A = TRUE", "A = b =?= c",
    "A = b =!= c", "A = b is c", "A = {1, 2}", "A = [b = 1; c = 2]", "A = ", "= 1", "A",
    "A == 1", "A = (1", "A = 1 2", "'A' = 1", "My Attr = 1", "A = 'b c'", "A = MY.b + TARGET.c",
    "A = strcat(\"a\", \"b\")", "A = x ?: y", "A = -5", "A = - 5", "# comment", "A = # x",
    'A = "unterminated', "A = \"q\\\"", "A.B = 1", "A = 1 // comment",
]
# Unusual spacing, quoting, trailing text, odd names and lines that are not
# assignments, as a hook or cron script might print them.
OLD_LINES += [
    # spacing
    "A\t=\t1", "A =1", "A= 1", " A=1 ", "A = 1\t", "A =  \t 1", "\tA = 1",
    # quoting
    'A = ""', 'A = "a""b"', "A = \"it's\"", "A = 'x'", 'A = "\\""', 'A = "\\x41"', 'A = "\\101"',
    'A = "\\u0041"', 'A = "a\\\\"', "A = 'a'b'", 'A = "x" + "y"', 'A = "a\\tb"',
    # trailing text
    "A = 1;", "A = 1 ;", "A = 1; B = 2", "A = 1 # c", 'A = "x" y', "A = 1)", "A = 1]", "A = f(1) 2",
    "A = 1,", "A = 1 /* c */", "A = /* c */ 1", "A = 1 /* open", "A = 1 \\", "A = true false",
    # names
    "A-B = 1", "A_B = 1", "_A = 1", "1A = 1", "A1 = 1", "A$ = 1", "A.b.c = 1", "MY.A = 1", "TARGET.A = 1",
    "A:B = 1", "@A = 1", "A@ = 1", "\u00c4 = 1", "'a b' = 1", "'A' = 2", "A\\B = 1", "a = 1", "aBc = 1",
    "true = 1", "undefined = 1", "error = 1", "is = 1", "isnt = 1", "parent = 1", "my = 1", "target = 1",
    # not assignments
    "[A = 1]", "A := 1", "A =: 1", "A ==", "==", "=", " ", "A = = 1", "A += 1", "A => 1", "-", "- tag",
    "!A = 1", "A B C", "A = 1 = 2", "A =\t", "A B = 1",
]


def gen_old():
    w = Cases("old.jsonl")
    for line in OLD_LINES:
        w.add({"kind": "old", "line": line})
    w.finish()


# oldads.jsonl: whole old-syntax texts (several lines, blank-line separated
# ads) as HTCondor's reader splits and keeps them.

OLDAD_LINES = ["A = 1", 'B = "x # y"', "# comment", "// c", "not an assignment", "= 2", "C = (1 +",
               "D = 2 # trailing", "  E  =  3  ", "", "F = [x = 1;", "/* c */ G = 4", "H = 5 /* c */",
               'I = "C:\\\\dir\\\\"', "J = 0123", "K = a b", "\tL\t=\t6"]


def old_ads(text):
    try:
        return {"text": text, "ads": [ad.printOld() for ad in
                                      classad2.parseAds(text, classad2.ParserType.Old)]}
    except Exception:
        return {"text": text, "error": True}


def gen_oldads():
    cases = []
    for a in OLDAD_LINES:
        for b in OLDAD_LINES:
            cases.append("A0 = 0\n%s\n%s\nZ = 9\n" % (a, b))
            cases.append("%s\n%s\n\nY = 8\n" % (a, b))
    # Repeated names: which of the lines an ad keeps.
    cases += ["A = 1\nA = 2\n", "A = 1\na = 2\n", "A = 1\n\nA = 2\n", "A = 1\nA = (\n",
              "A = (\nA = 1\n", "A = 1\nB = A\nA = 3\n", "a = 1\nA = 2\nb = a\n",
              "A = 1\n A = 2\n", "A = 1\n\tA=2\n", "Name = \"x\"\nNAME = \"y\"\nname = \"z\"\n"]
    w = Writer("oldads.jsonl")
    for text in cases:
        w.write(old_ads(text), text)
    w.close()


# ---------------------------------------------------------------------------
# match.jsonl

MACHINES = [
    '[Name = "m1"; Memory = 1024; Cpus = 1; Arch = "X86_64"; OpSys = "LINUX"; '
    'Requirements = TARGET.RequestMemory <= Memory && TARGET.RequestCpus <= Cpus; Rank = 0]',
    '[Name = "m2"; Memory = 4096; Cpus = 8; Arch = "X86_64"; OpSys = "LINUX"; KeyboardIdle = 1000; '
    'START = KeyboardIdle > 900; Requirements = START && TARGET.RequestMemory <= Memory; '
    'Rank = TARGET.Owner == "alice"]',
    '[Name = "m3"; Memory = 512; Cpus = 2; Arch = "ARM64"; OpSys = "LINUX"; Requirements = true; '
    'Rank = TARGET.RequestCpus]',
    '[Name = "m4"; Memory = 2048; Requirements = undefined]',
    '[Name = "m5"; Memory = 2048; Requirements = 1]',
    '[Name = "m6"; Memory = 2048; Requirements = "yes"]',
    '[Name = "m7"; Memory = 2048; Requirements = Owner == "alice"]',
    '[Name = "m8"; Memory = 8192; Cpus = 16; Requirements = RequestMemory < Memory; '
    'Rank = 1.5]',
]
JOBS = [
    '[Owner = "alice"; RequestMemory = 512; RequestCpus = 1; '
    'Requirements = Arch == "X86_64" && TARGET.Memory >= RequestMemory; Rank = TARGET.Memory]',
    '[Owner = "bob"; RequestMemory = 2000; RequestCpus = 2; Requirements = TARGET.Cpus >= 2; '
    'Rank = -TARGET.Memory]',
    '[Owner = "carol"; RequestMemory = 100; RequestCpus = 1; Requirements = true]',
    '[Owner = "dave"; RequestMemory = 100; Requirements = MY.RequestMemory < TARGET.Memory; '
    'Rank = "high"]',
    '[Owner = "erin"; RequestMemory = 100]',
]


def gen_match():
    w = Cases("match.jsonl")
    for m, j in itertools.product(MACHINES, JOBS):
        for left, right in [(j, m), (m, j)]:
            w.add({"kind": "match", "left": left, "right": right})
    w.finish()


# ---------------------------------------------------------------------------
# time.jsonl: the time functions over the whole range of times (past 2038,
# before 1970, far out), each time as an integer, a real and an absTime.

TIMES = [0, 1, -1, -86400, 86399, 1600000000, 2147483647, 2147483648, -2147483648,
         -2147483649, 4102444800, 4294967296, 253402300799, 253402300800, 99999999999,
         -99999999999, -62135596800, 32503680000]
TIME_FORMATS = ["%Y-%m-%d %H:%M:%S", "%c", "%Y", "%j %U %W %w", "%s", "%z %Z"]


def gen_time():
    w = Cases("time.jsonl")
    for t in TIMES:
        forms = [str(t), f"{t}.5", f"absTime({t})", f"absTime({t}, 3600)", f"absTime({t}.0)"]
        for x in forms:
            eval_case(w, x)
            eval_case(w, f"formatTime({x})")
            for f in TIME_FORMATS:
                eval_case(w, f'formatTime({x}, "{f}")')
            eval_case(w, f"splitTime({x})")
            eval_case(w, f"splitTime({x}).Year")
            eval_case(w, f"string({x})")
            eval_case(w, f"int({x})")
    w.finish()


# ---------------------------------------------------------------------------
# corners.jsonl: aggregates over lists of every kind of element, and the
# regex substitutions with patterns that match the empty string.

AGG_ITEMS = ["1", "2.5", "-3", "true", "false", '"a"', '""', "undefined", "error", "{1}", "{}",
             "[a = 1]", "absTime(5)", "relTime(5)"]
EMPTY_PATTERNS = ["^", "$", "", "b*", "x*", "a*", "(?=b)", "(?=a)|(?=b)", "b|(?=c)", "\\\\b",
                  "^|b", "a|$", "(?=c)", "c?", "(?<=a)", "b+", "."]
SUBJECTS = ["", "a", "abc", "abb", "aaab", "ab cd", "bbb", "cab"]


def gen_corners():
    w = Cases("corners.jsonl")
    for f in ["sum", "avg", "min", "max"]:
        eval_case(w, f"{f}({{}})")
        for a in AGG_ITEMS:
            eval_case(w, f"{f}({{{a}}})")
            for b in AGG_ITEMS:
                eval_case(w, f"{f}({{{a}, {b}}})")
    for p in EMPTY_PATTERNS:
        for t in SUBJECTS:
            for f in ["replaceAll", "replace", "regexps"]:
                eval_case(w, f'{f}("{p}", "{t}", "<\\\\0>")')
            eval_case(w, f'regexps("{p}", "{t}", "x", "g")')
    w.finish()


# unresolved.jsonl: unresolved(attr[, pattern]) over the references an
# attribute's expression makes, followed through the ad.

UNRESOLVED_FORMS = ["x", "b + x", "zz + Yy + xx + b", "x + x + X", "c.d + MY.e + TARGET.f + Other.g + h.i.j",
                    "MY.b.c + TARGET.x + target.Y + my.z", "MY.x", "TARGET.x", "Other.x", "my.b",
                    "n.c", "n.d", "n.c + n.d.e", "parent.x + .y", ".b + .x", "a + x", "r + x",
                    "[x = y].x + q", "{p, q}[0]", "f(p)", "strcat(p, \"q\")", "isUndefined(zz) ? p : q",
                    "1", "\"s\"", "undefined", "error", "{}", "[]", "chain", "loop1", "self.x",
                    "b.x", "x[1]", "x.y.z", "TARGET.b + MY.b", "ifThenElse(b, p, q)", "-x", "(x)",
                    "Y + y + x + X", "aa + AB + ab + Aa", "TARGET.f + s", "TARGET.f + u", "MY.e + d",
                    "TARGET.f + TARGET.F + f", "Other.f + TARGET.f + f", "TARGET.a.b + s", "MY.n.q + s",
                    "n.d + N.D + n.c", "Other.g + p", "target.f + MY.f + my.F"]
UNRESOLVED_PATTERNS = ['"x"', '"X"', '"^x$"', '""', '"."', '"b.c"', '"^b$"', '"my"', '"target"',
                       '"other"', '"["', '"y|q"', "1", "undefined", "error", '"^$"', '"^f$"', '"^d$"']


def gen_unresolved():
    w = Cases("unresolved.jsonl")
    for form in UNRESOLVED_FORMS:
        my = ("[a = %s; b = 1; n = [c = 1]; chain = b2; b2 = b3; b3 = dd; loop1 = loop2; "
              "loop2 = loop1 + w]" % form)
        eval_case(w, "unresolved(a)", my)
        eval_case(w, "unresolved(a)", my, "[x = 1; b = 2; f = 3]")
        for p in UNRESOLVED_PATTERNS:
            eval_case(w, "unresolved(a, %s)" % p, my)
    my = "[a = x + y; b = 1]"
    for call in ["unresolved()", "unresolved(a, \"x\", 1)", "unresolved(\"a\")", "unresolved(nosuch)",
                 "unresolved(MY.a)", "unresolved(TARGET.a)", "unresolved(b)", "unresolved(a.b)",
                 "unresolved(A)", "unresolved(1)", "unresolved(a + 1)", "unresolved(undefined)"]:
        eval_case(w, call, my)
        eval_case(w, call, my, "[a = q; b = 2]")
        eval_case(w, call)
    w.finish()


# cycles.jsonl: attributes that refer to themselves, directly or through
# others, nested ads and the other ad of a match. HTCondor evaluates a
# reference back to an attribute being evaluated as undefined; the attribute
# asked for is evaluated directly (its own text as the expression) or through
# a reference (the name as the expression), which differ by one level.

CYCLE_ADS = [
    "[a = a + 1]", "[a = a]", "[a = isUndefined(a)]", "[a = isError(a)]", "[a = a =?= undefined]",
    "[a = a ?: 3]", "[a = ifThenElse(isUndefined(a), 1, 2)]", "[a = strcat(\"x\", a)]",
    "[a = size(a)]", "[a = {1, a}]", "[a = {a}[0]]", "[a = b; b = a]", "[a = b + 1; b = a]",
    "[a = b + 1; b = c + 1; c = a + 1]", "[a = isUndefined(b) && b =?= undefined; b = a]",
    "[a = b; b = isUndefined(a)]", "[a = b + b; b = a]", "[a = [x = a.x + 1].x]",
    "[n = [x = x + 1]; a = n.x]", "[a = [y = parent.a].y]", "[a = my.a + 1]", "[a = .a + 1]",
    "[a = b ?: 5; b = a]", "[a = member(a, {1})]", "[a = a || true]", "[a = a && false]",
    "[a = false && a]", "[a = true || a]", "[a = a is undefined]", "[a = a isnt undefined]",
    "[a = eval(\"a\")]", "[a = eval(\"a + 1\")]", "[a = unparse(a)]", "[a = ifThenElse(a, 1, 2)]",
    "[a = a == a]", "[a = -a]", "[a = !a]", "[a = string(a)]", "[a = int(a)]", "[a = {a, a}]",
    "[a = [b = a].b]", "[a = n.b; n = [b = a]]", "[a = n.b; n = [b = parent.a]]",
    "[a = b[0]; b = {a}]", "[a = b.c; b = [c = a]]", "[a = isUndefined(b); b = c; c = b]",
    "[a = b; b = c; c = isUndefined(b)]", "[a = b =?= c; b = c; c = b]", "[a = A + 1]",
    "[a = toUpper(a)]", "[a = a * 0]", "[a = a < 1 ? 1 : 2]", "[a = sum({a, 1})]",
    "[a = isUndefined(a) ? a : 7]", "[a = 1; b = b + a]", "[a = target.a]", "[a = other.b]",
    "[a = target.b; c = 1]", "[a = b; b = target.c]",
]
CYCLE_TARGETS = [None, "[a = 5; b = target.a; c = my.c]", "[b = target.a + 1; c = target.b]"]


def gen_cycles():
    w = Cases("cycles.jsonl")
    for text in CYCLE_ADS:
        ad = classad2.ClassAd(text)
        for target in CYCLE_TARGETS:
            exprs = ["a", "MY.a", repr(ad.lookup("a")), "a + 0", "isUndefined(a)", "[x = a].x"]
            exprs += [n for n in ("b", "c", "n") if n in ad]
            for e in exprs:
                eval_case(w, e, text, target)
    w.finish()


# syntax.jsonl: where an expression or an ad may end, and what an ad's
# attribute list may hold (semicolons, comments, names).

SYNTAX_BASES = ["1", "1 + 2", "x", "''", "\"s\"", "{1, 2}", "{}", "[]", "[a = 1]", "f(1)",
                "a.b", "(1)", "true ? 1 : 2", "-1", "a[0]"]
SYNTAX_ENDS = ["", ";", ";;", " ; ", " ; ; ", "; 2", ";x", " // c", " // c\n", "//", " /* c */",
               " /* c", " # c", "\n", " ;// c\n", "; /* c */ ;", ",", ")", "]"]
SYNTAX_ADS = ["[]", "[;]", "[;;]", "[ ; ]", "[a = 1]", "[a = 1;]", "[a = 1;;]", "[;a = 1]",
              "[;;a = 1;;]", "[a = 1;;b = 2]", "[a = 1 ; ; b = 2]", "[a = 1 b = 2]",
              "[a = 1,b = 2]", "[a = 1; ;]", "['' = 1]", "['' = 1; b = 2]", "[b = 2; '' = 1]",
              "[a = '']", "[a = ''.b]", "['a' = 1]", "[' ' = 1]", "[a = [;]]", "[a = [b = 1;]]",
              "[a = {[;]}]", "[a = {[]}]", "[a = 1 // c\n]", "[a = 1 // c]", "[a = 1 /* c */]",
              "[a = 1; /* c */ ; b = 2]", "[a = 1 # c\n]", "[a =]", "[= 1]", "[a = 1; b]",
              "[a; b = 1]", "[a = 1;; ;; b = 2;; ;;]", "[ a = 1 ; ]"]


def gen_syntax():
    w = Cases("syntax.jsonl")
    for base in SYNTAX_BASES + SYNTAX_ADS:
        for end in SYNTAX_ENDS:
            w.add({"kind": "parse", "expr": base + end})
    for text in [";", ";;", " ", "// c", "// c\n1", "/* c */ 1", "1 /* c */", "''.a", ".''",
                 "'' + 1", "{1;}", "{;1}", "{1,}", "{,}", "f(1;2)", "f(;)", "f(1,)"]:
        w.add({"kind": "parse", "expr": text})
    w.finish()


GENERATORS = {"eval": lambda: gen_eval(), "parse": lambda: gen_parse(),
              "syntax": lambda: gen_syntax(),
              "print": lambda: gen_print(), "old": lambda: gen_old(),
              "match": lambda: gen_match(), "time": lambda: gen_time(),
              "corners": lambda: gen_corners(), "unresolved": lambda: gen_unresolved(),
              "oldads": lambda: gen_oldads(), "cycles": lambda: gen_cycles()}


def main():
    """All fixtures, or those named after --only (eval, parse, syntax, print,
    old, oldads, match, time, corners, unresolved, cycles)."""
    os.makedirs(OUT, exist_ok=True)
    only = sys.argv[sys.argv.index("--only") + 1:] if "--only" in sys.argv else list(GENERATORS)
    for name in only:
        GENERATORS[name]()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker()
    else:
        main()
