#!/usr/bin/env python3
"""A fresh recall server's first answer, before against after, through the real binary: each
round starts one server per binary on the same built index (in alternating order, bench/ab.py),
times `initialize` then one `query_code` (or `query_index`) call from request to answer, reads
its resident memory right after (VmRSS) and its peak (VmHWM), then times --warm more calls.
Every answer is checked (a result, not an error; code queries with a hit) and the two binaries'
answers must be the same text.

usage: first_ab.py ROOT BEFORE_BIN AFTER_BIN [--tool query_code] [--rounds 10] [--warm 50]
       [--after-args ARGS]
ROOT holds an index the AFTER binary built (so its sidecars are there; a BEFORE that does not
know one ignores it). --after-args passes options to the AFTER server only (`--lookup-from none`
for an A/A of the whole load).
"""
import argparse, os, statistics, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ab import alternate, paired, report, spread  # noqa: E402
from scale import CODE_QUERIES, INDEX_QUERIES, serve  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--tool", default="query_code", choices=["query_code", "query_index"])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--warm", type=int, default=50)
    ap.add_argument("--after-args", default="")
    args = ap.parse_args()
    root = Path(args.root).resolve()
    pool = CODE_QUERIES if args.tool == "query_code" else INDEX_QUERIES
    extra = args.after_args.split()

    def run(binary, options):
        def thunk(i):
            # Each round starts from another question of the pool, the same for both sides.
            queries = [pool[(i + j) % len(pool)] for j in range(args.warm + 1)]
            return serve(os.path.abspath(binary), root, args.tool, queries, options)
        return thunk

    results = alternate(args.rounds, [("before", run(args.before, [])),
                                      ("after", run(args.after, extra))])
    for b, a in zip(results["before"], results["after"]):
        if b[4] != a[4]:
            sys.exit("the two binaries answered differently")
    for name in ("before", "after"):
        r = results[name]
        warm = [statistics.median(m[3]) for m in r]
        print(f"{name}: first {spread([m[0] for m in r])} ms; resident after it "
              f"{spread([m[1] / 1024 for m in r])} MiB, peak {spread([m[2] / 1024 for m in r])} MiB; "
              f"warm p50 {spread(warm)} ms")
    print(report("first answer before/after", paired(
        [m[0] for m in results["after"]], [m[0] for m in results["before"]])))
    print(report("warm p50 before/after", paired(
        [statistics.median(m[3]) for m in results["after"]],
        [statistics.median(m[3]) for m in results["before"]])))


if __name__ == "__main__":
    main()
