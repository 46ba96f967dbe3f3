#!/usr/bin/env python3
"""Before/after check for recall changes that must not change answers: drives two builds of the
binary over stdio (`--serve-mcp recall`) with the same tool calls and reports how many replies
differ byte for byte.

Calls: every query of QUERIES (the `queries.tsv` that `bench.py --keep` leaves next to the kept
project: `index<TAB>query` or `code<TAB>query` per line) at k = 1, 5 and 20 against ROOT; then one
query against each of a few damaged copies of ROOT's memory index (the fast load path must decline
them and the messages must stay the same).

usage: compare.py ROOT QUERIES BEFORE_BIN AFTER_BIN   (exit status 1 when any reply differs)
"""
import json, shutil, subprocess, sys, tempfile
from pathlib import Path

K_VALUES = (1, 5, 20)
# (text to find in the pretty-printed memory index, replacement, how many occurrences to change)
DAMAGE = [
    ('"length": ', '"length": -', 3),
    ('"paragraphs": [\n', '"paragraphs": [1,\n', 1),
    ('"snippet": ', '"snippet2": ', 3),
    ('"title": ', '"title": 1, "title": ', 1),
    ('"source_mtime": ', '"source_mtime": "x", "q": ', 3),
    ('"documents": [', '"documents": [[], ', 1),
]


def replies(binary, root, calls):
    """The server's reply lines to `calls` ((tool, query, k) each), after the handshake."""
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "compare", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    messages += [{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                  "params": {"name": tool, "arguments": {"query": query, "k": k}}}
                 for i, (tool, query, k) in enumerate(calls)]
    out = subprocess.run([binary, "--serve-mcp", "recall", "--root", str(root)], check=True,
                         input="".join(json.dumps(m) + "\n" for m in messages),
                         capture_output=True, text=True).stdout.splitlines()
    if len(out) != len(calls) + 1:
        sys.exit(f"{binary}: {len(out)} replies to {len(calls) + 1} requests")
    return out[1:]


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    root, queries, before, after = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    calls = [("query_index" if kind == "index" else "query_code", query, k)
             for kind, query in (line.split("\t", 1) for line in queries.read_text().splitlines())
             for k in K_VALUES]
    a, b = replies(before, root, calls), replies(after, root, calls)
    differ = sum(x != y for x, y in zip(a, b))
    errors = sum('"isError":true' in x for x in a)
    print(f"{len(calls)} calls: {differ} replies differ, {errors} are errors")
    index = (root / "references/memory-index.json").read_text()
    for old, new, count in DAMAGE:
        if old not in index:
            sys.exit(f"cannot damage the memory index: {old!r} not found")
        tmp = Path(tempfile.mkdtemp(prefix="recall-compare-"))
        try:
            (tmp / "references").mkdir()
            (tmp / "references/memory-index.json").write_text(index.replace(old, new, count))
            call = [("query_index", "socket timeout", 5)]
            x, y = replies(before, tmp, call)[0], replies(after, tmp, call)[0]
        finally:
            shutil.rmtree(tmp)
        differ += x != y
        text = json.loads(x)["result"]["content"][0]["text"]
        print(f"  {new!r}: {'same' if x == y else 'DIFFERENT'}: {text.splitlines()[0][:110]}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
