#!/usr/bin/env python3
"""recall's cold first query, before against after: two builds of `recall_bench` on one project.

Each pair runs `recall_bench once query ROOT TOOL QUERY` (a new process whose new `Recall` answers
its first call: read, parse, validate, convert, rank; timed inside the process) with the BEFORE
binary and with the AFTER binary, in an order that alternates from pair to pair (A B, B A, ...), so
that a slow phase of a shared machine hits both sides (bench/ab.py). Every reply's time is taken only if the
process succeeded. Reports each side's min and median (ms) and the min and median of the paired
ratios before / after (above 1.00x the after build is faster).

With --parse-too each round also times `recall_bench once parse FILES` (reading and parsing
the files the first query reads, as trees: bench.py's "parse alone") with each build, the four
runs of a round in the order before-query, before-parse, after-query, after-parse, then reversed
in the next round; it reports each build's first query against its own parse alone (min and
median of the paired ratios within a round; at most 1.00x is the goal of docs/recall.md).

usage: cold_ab.py ROOT BEFORE_BIN AFTER_BIN [--tool query_code] [--pairs 21] [--cpu 1] [--parse-too]
ROOT is a project with a built index (`bench.py --keep` leaves one; its query is drawn from the
index's own vocabulary as bench.py draws it). --cpu pins both sides to one CPU with `taskset`.
"""
import argparse, statistics, subprocess, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ab import alternate, paired, report  # noqa: E402
from bench import index_files, make_queries  # noqa: E402


def cold_ms(binary, root, tool, query, cpu):
    return once_ms(binary, ["query", str(root), tool, query], cpu)


def parse_ms(binary, files, cpu):
    return once_ms(binary, ["parse", *map(str, files)], cpu)


def once_ms(binary, args, cpu):
    argv = [binary, "once", *args]
    if cpu is not None:
        argv = ["taskset", "-c", str(cpu)] + argv
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{argv} failed: {out.stderr}")
    return float(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--tool", default="query_code", choices=["query_code", "query_index"])
    ap.add_argument("--pairs", type=int, default=21)
    ap.add_argument("--cpu", type=int, default=None)
    ap.add_argument("--parse-too", action="store_true")
    args = ap.parse_args()
    root = Path(args.root)
    mem_q, code_q = make_queries(root, 1)
    query = code_q[0] if args.tool == "query_code" else mem_q[0]
    # One warm-up of each (the index files into the page cache), not counted.
    cold_ms(args.before, root, args.tool, query, args.cpu)
    cold_ms(args.after, root, args.tool, query, args.cpu)
    files = index_files(root, args.tool)
    runs = [("before", lambda i: cold_ms(args.before, root, args.tool, query, args.cpu)),
            ("after", lambda i: cold_ms(args.after, root, args.tool, query, args.cpu))]
    if args.parse_too:
        runs.insert(1, ("before parse", lambda i: parse_ms(args.before, files, args.cpu)))
        runs.append(("after parse", lambda i: parse_ms(args.after, files, args.cpu)))
    t = alternate(args.pairs, runs)
    print(f"{args.tool} cold first query, {args.pairs} alternated pairs, query {query!r}:")
    for name in ("before", "after"):
        print(f"  {name}: min {min(t[name]):.1f} ms, median {statistics.median(t[name]):.1f} ms")
    print("  " + report("before / after", paired(t["after"], t["before"])))
    for name in ("before", "after") if args.parse_too else ():
        parses = t[f"{name} parse"]
        print(f"  {name}: parse alone min {min(parses):.1f} ms, median {statistics.median(parses):.1f} ms; "
              + report("first query / parse alone", paired(parses, t[name])))


if __name__ == "__main__":
    main()
