#!/usr/bin/env python3
"""Writes approval-digests.json: the published test vectors of the scoped-approval digest.

Computed with Python's own json module, independently of the Rust code the vectors check:
canonical form = json.dumps({"arguments": ARGS, "tool": NAME}, sort_keys=True,
separators=(",", ":"), ensure_ascii=False), digest = SHA-256 of its UTF-8 bytes. Inputs with no
canonical form (a duplicate key, the integer -0, a number beyond a double's range) are refused
here as docs/approvals.md says. Run from the repository root:
    python3 tests/data/gen_approval_digests.py > tests/data/approval-digests.json
"""
import hashlib
import json
import math


class NoCanonicalForm(Exception):
    pass


def pairs(items):
    keys = [k for k, _ in items]
    if len(keys) != len(set(keys)):
        raise NoCanonicalForm("duplicate key")
    return dict(items)


def parse_int(text):
    if text == "-0":
        raise NoCanonicalForm("integer -0")
    return int(text)


def parse_float(text):
    value = float(text)
    if math.isinf(value):
        raise NoCanonicalForm("beyond a double")
    return value


def parse_constant(name):
    raise NoCanonicalForm("not JSON: " + name)


VECTORS = [
    ("no arguments", "fs_write", "{}"),
    ("plain members", "fs_write", '{"path": "notes/a.txt", "text": "hello"}'),
    ("members sorted at every level, arrays kept in order", "fs_write",
     '{"b": {"y": 1, "x": 2}, "a": [2, 1, {"d": null, "c": [true, false]}]}'),
    ("same call, other member order and whitespace", "fs_write",
     '{ "a" : [2,1,{"c":[true,false],"d":null}], "b":{"x":2,"y":1} }'),
    ("float 1.0", "fs_write", '{"n": 1.0}'),
    ("float 10e-1 is the same double as 1.0", "fs_write", '{"n": 10e-1}'),
    ("integer 1 is not the float 1.0", "fs_write", '{"n": 1}'),
    ("small and large floats in exponent form", "fs_write",
     '{"a": 0.00001, "b": 1.5e16, "c": 1e16, "d": 9999999999999998.0, "e": 0.0001}'),
    ("float extremes", "fs_write", '{"max": 1.7976931348623157e308, "min": 5e-324, "tenth": 0.1}'),
    ("float -0.0 keeps its sign", "fs_write", '{"n": -0.0}'),
    ("integers beyond 64 bits are written as they are", "fs_write",
     '{"big": 123456789012345678901234567890, "neg": -98765432109876543210, "u64": 18446744073709551615}'),
    ("string escapes: only quote, backslash and C0 controls", "fs_write",
     '{"s": "q\\" b\\\\ n\\n t\\t r\\r b\\b f\\f c\\u0001\\u001f del\\u007f sl\\/ ls\\u2028"}'),
    ("non-ASCII as UTF-8, escaped or not in the input", "fs_write",
     '{"s": "caf\\u00e9 \\ud83d\\ude00 \u65e5\u672c"}'),
    ("no normalisation: e + U+0301 is not U+00E9", "fs_write", '{"s": "cafe\\u0301"}'),
    ("keys by code point, not UTF-16 code unit", "fs_write",
     '{"\\ud83d\\ude00": "U+1F600", "\\uff61": "U+FF61", "B": 1, "a": 2, "b": 3}'),
    ("tool name takes part", "ns/tool.v1-x", '{"path": "notes/a.txt", "text": "hello"}'),
]

REFUSED = [
    ("a duplicate key", "fs_write", '{"path": "/etc/passwd", "path": "notes/a.txt"}', "/path"),
    ("a duplicate key deep inside", "fs_write", '{"x": [{"k": 1, "k": 2}]}', "/x/0/k"),
    ("the integer -0", "fs_write", '{"n": -0}', "/n"),
    ("a number beyond a double", "fs_write", '{"n": [1e400]}', "/n/0"),
    ("a negative number beyond a double", "fs_write", '{"n": -1e400}', "/n"),
]


def load(text):
    return json.loads(text, object_pairs_hook=pairs, parse_int=parse_int,
                      parse_float=parse_float, parse_constant=parse_constant)


def main():
    out = {"comment": "Scoped-approval digests (docs/approvals.md). canonical = compact JSON of "
                      "{\"arguments\": ARGS, \"tool\": TOOL}, keys sorted by code point, "
                      "floats as Python repr; sha256 over its UTF-8 bytes. `arguments` is JSON "
                      "text, parsed as sent. `refused`: inputs with no canonical form.",
           "version": 1, "vectors": [], "refused": []}
    for name, tool, text in VECTORS:
        canonical = json.dumps({"arguments": load(text), "tool": tool}, sort_keys=True,
                               separators=(",", ":"), ensure_ascii=False)
        out["vectors"].append({"name": name, "tool": tool, "arguments": text,
                               "canonical": canonical,
                               "sha256": hashlib.sha256(canonical.encode()).hexdigest()})
    for name, tool, text, pointer in REFUSED:
        try:
            load(text)
        except NoCanonicalForm:
            pass
        else:
            raise SystemExit("expected no canonical form: " + name)
        out["refused"].append({"name": name, "tool": tool, "arguments": text, "at": pointer})
    print(json.dumps(out, indent=1, sort_keys=True, ensure_ascii=True))


main()
