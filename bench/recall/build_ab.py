#!/usr/bin/env python3
"""`index build` speed of two binaries on one project, alternated, with their outputs compared.

Builds the project (one kept by `bench.py --keep`) fresh with binary A and binary B in rounds of
A B / B A order (bench/ab.py), so the machine's load falls on both alike; each build's wall and CPU time
(user + system of the child, from wait4) is recorded. Every build's index files are compared,
`built_at` and the build ids that follow from it aside, with the first build's: the two binaries
must write the same bytes, so a faster build that writes something else fails here.

Reports per binary the median and min of wall and CPU seconds and MB/s (source bytes as the build
reports them plus the memory corpus, as bench.py counts them), and the paired ratios B/A (min
and median over rounds).

usage: build_ab.py ROOT BIN_A BIN_B [--rounds 5] [--cpu N] [--one-edit]
  --cpu N pins both builds to CPU N with taskset (the build's two threads then share one core:
  CPU time is still comparable, wall time no longer shows the two stages' overlap).
  --one-edit times, after each full build, a rebuild once one source file (the first `.py` in
  sorted order) has gained a function; the outputs compared are the rebuild's, and the figures
  are the rebuild's wall and CPU time and its share of the full build's (the file is restored
  at the end).
"""
import argparse, hashlib, os, re, shutil, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ab import alternate, paired, report  # noqa: E402

# The members whose values change with the time of the build.
STAMPED = re.compile(rb'"(built_at|index_build_id|build_id)": "[^"]*"')


def clear(references: Path) -> None:
    shutil.rmtree(references / "code-index", ignore_errors=True)
    # The build cache too: every build here is a full one.
    for name in ("memory-index.json", "memory-sections.json", "code-outline.json", "code-build-cache.bin"):
        (references / name).unlink(missing_ok=True)


def digest_of_outputs(references: Path) -> dict:
    files = [references / n for n in ("memory-index.json", "memory-sections.json", "code-outline.json")]
    files += sorted((references / "code-index").glob("*.json"))
    out = {}
    for f in files:
        out[str(f.relative_to(references))] = hashlib.sha256(STAMPED.sub(rb'"\1": ""', f.read_bytes())).hexdigest()
    return out


def build(binary: str, root: Path, cpu) -> tuple:
    argv = [binary, "index", "build", "--root", str(root)]
    if cpu is not None:
        argv = ["taskset", "-c", str(cpu)] + argv
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"{argv} failed: {stderr.decode(errors='replace')}")
    line = next(l for l in stderr.decode().splitlines() if "MB of source" in l)
    src_mb = float(line.split("(")[1].split(" MB")[0])
    return wall, usage.ru_utime + usage.ru_stime, src_mb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", type=int)
    ap.add_argument("--one-edit", action="store_true")
    args = ap.parse_args()
    root = Path(args.root)
    references = root / "references"
    edited = min(p for p in root.rglob("*.py") if "references" not in p.relative_to(root).parts)
    original, stamp = edited.read_bytes(), edited.stat().st_mtime_ns

    def put(content, mtime_ns):
        """The edited file's content, with a fixed mtime: the outputs then compare across rounds."""
        edited.write_bytes(content)
        os.utime(edited, ns=(mtime_ns, mtime_ns))
    edit = original + b"\n\ndef one_edit_function(argument):\n    return argument\n"
    md_mb = sum(p.stat().st_size for p in (references / "modules").glob("*.md")) / 1e6
    expected = {}

    def measure(side, r):
        clear(references)
        if args.one_edit:
            put(original, stamp)
            time.sleep(1.1)  # past the build cache's racy window: the file can be cached
        wall, cpu, src_mb = build(getattr(args, side), root, args.cpu)
        if args.one_edit:
            full = wall
            put(edit, stamp + 1_000_000_000)
            time.sleep(1.1)
            wall, cpu, src_mb = build(getattr(args, side), root, args.cpu)
            print(f"round {r} {side}: one edit {100 * wall / full:.1f} % of the full build "
                  f"({full:.2f} s)", flush=True)
        got = digest_of_outputs(references)
        expected.setdefault("digests", got)
        if got != expected["digests"]:
            first = expected["digests"]
            diff = sorted(k for k in set(got) | set(first) if got.get(k) != first.get(k))
            sys.exit(f"round {r} binary {side}: output differs from the first build in {diff}")
        expected["src_mb"] = src_mb
        print(f"round {r} {side}: {wall:.2f} s wall, {cpu:.2f} s CPU", flush=True)
        return wall, cpu

    try:
        times = alternate(args.rounds, [("a", lambda r: measure("a", r)), ("b", lambda r: measure("b", r))])
    finally:
        put(original, stamp)
    src_mb = expected["src_mb"]
    expected = expected["digests"]
    mb = src_mb + md_mb
    print(f"{mb:.1f} MB of source (code {src_mb:.1f} + markdown {md_mb:.1f}); outputs identical "
          f"({len(expected)} files, {2 * args.rounds} builds)")
    for side in ("a", "b"):
        walls = [w for w, _ in times[side]]
        cpus = [c for _, c in times[side]]
        print(f"{side} {getattr(args, side)}: wall median {statistics.median(walls):.2f} s "
              f"({mb / statistics.median(walls):.1f} MB/s), min {min(walls):.2f} s ({mb / min(walls):.1f} MB/s); "
              f"CPU median {statistics.median(cpus):.2f} s ({mb / statistics.median(cpus):.1f} MB/s), "
              f"min {min(cpus):.2f} s ({mb / min(cpus):.1f} MB/s)")
    for i, what in ((0, "wall"), (1, "CPU")):
        print(report(f"B/A {what}", paired(times["a"], times["b"], key=lambda t, i=i: t[i])))


if __name__ == "__main__":
    main()
