#!/usr/bin/env python3
"""`index build` with nothing changed, two binaries alternated, each on its own copy of a project.

A build cache is bound to the binary that wrote it, so the two binaries cannot take turns on one
tree without every build being a full one: each gets its own copy (ROOT_A, ROOT_B: two copies of
the same git work tree, e.g. `cp -a`), built once fresh and once more to settle. Then rounds of
A B / B A order (bench/ab.py) time a rebuild of each copy by its binary; each rebuild must say
that it read no file ("0 files read"), or the run stops. Run it a second time with the copies
swapped, so neither binary keeps the copy that happens to sit better on the disk.

Reports per binary the median and min wall seconds, and the paired ratios B/A (min and median
over rounds).

usage: nochange_ab.py BIN_A ROOT_A BIN_B ROOT_B [--rounds 12]
"""
import argparse, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ab import alternate, paired, report  # noqa: E402


def rebuild(binary: str, root: str, check: bool = True) -> float:
    started = time.perf_counter()
    out = subprocess.run([binary, "index", "build", "--root", root], capture_output=True,
                         text=True)
    wall = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit(f"{binary} on {root} failed: {out.stderr}")
    if check and "0 files read" not in out.stderr:
        sys.exit(f"{binary} on {root} read files with nothing changed: {out.stderr}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bin_a")
    parser.add_argument("root_a")
    parser.add_argument("bin_b")
    parser.add_argument("root_b")
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    sides = [("a", args.bin_a, args.root_a), ("b", args.bin_b, args.root_b)]
    for _, binary, root in sides:
        rebuild(binary, root, check=False)
        rebuild(binary, root)
    times = alternate(args.rounds, [(name, lambda i, b=binary, r=root: rebuild(b, r))
                                    for name, binary, root in sides])
    for name, binary, root in sides:
        values = times[name]
        print(f"{name} {binary} on {root}: wall median {statistics.median(values):.3f} s, "
              f"min {min(values):.3f} s")
    print(report("B/A wall", paired(times["a"], times["b"])))


if __name__ == "__main__":
    main()
