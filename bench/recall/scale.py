#!/usr/bin/env python3
"""How recall's costs grow with the repository: for each project given (a git work tree; the
issue's three are the Python standard library, a Python installation's library with its
site-packages, and that tree three times over), in this order:

  - full build: `index build` with no index and no cache (fresh), wall and CPU seconds, peak
    resident memory (`/usr/bin/time`), MB/s of indexed source, index bytes on disk;
  - rebuild with nothing changed, and after one source file was edited (a line appended; the
    edit is undone afterwards), wall seconds, and their share of the full build's;
  - first query: a fresh `--serve-mcp recall` process, `initialize`, then one `query_code` (or
    `query_index`) call timed from request to answer; its resident memory after the answer
    (VmRSS) and at peak (VmHWM);
  - warm: the next --queries calls of that process, p50 and p99.

Each figure is the median of --runs fresh runs (builds, and server processes). Every answer is
checked (a result, not an error, with at least one hit for the code queries).

usage: scale.py [--bin target/release/agentteams-mcp] [--runs 3] [--queries 50] ROOT [ROOT ...]
Run on a quiet machine: wall times include contention.
"""
import argparse, os, statistics, subprocess, sys, time
from pathlib import Path

from parity import rpc_session
from tree_peak import status

# Queries of one to three words a developer might ask of a Python code base.
CODE_QUERIES = [
    "parse json", "http request headers", "thread lock acquire", "read file lines",
    "socket connect timeout", "decimal context precision", "unittest assert equal",
    "encode base64", "regular expression compile", "email message parser", "zip archive extract",
    "subprocess pipe", "logging handler format", "datetime timezone", "csv writer",
    "xml element tree", "tarfile open", "hash digest", "queue put get", "path join",
]
INDEX_QUERIES = ["module documentation", "parse", "protocol", "file", "thread"]


def timed(argv, cwd=None):
    """Runs argv under /usr/bin/time: (wall s, cpu s, peak KiB, stderr)."""
    out = subprocess.run(["/usr/bin/time", "-f", "@@ %e %U %S %M", *argv], cwd=cwd,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{argv} failed: {out.stderr}")
    line = [l for l in out.stderr.splitlines() if l.startswith("@@ ")][-1].split()
    return float(line[1]), float(line[2]) + float(line[3]), int(line[4]), out.stderr


def references_bytes(root: Path):
    refs = root / "references"
    return {str(p.relative_to(refs)): p.stat().st_size for p in refs.rglob("*") if p.is_file()}


def builds(binary, root: Path, runs):
    full, nochange, onechange = [], [], []
    edited = min(p for p in root.rglob("*.py") if "references" not in p.relative_to(root).parts)
    original = edited.read_bytes()
    summary = ""
    try:
        for run in range(runs):
            subprocess.run(["rm", "-rf", str(root / "references")], check=True)
            wall, cpu, peak, err = timed([binary, "index", "build", "--root", str(root)])
            summary = next(l for l in err.splitlines() if "MB of source" in l)
            full.append((wall, cpu, peak))
            time.sleep(1.2)  # past the cache's racy window, so every file can be reused
            wall, cpu, peak, err = timed([binary, "index", "build", "--root", str(root)])
            assert "0 files read" in err, err
            nochange.append((wall, cpu, peak))
            edited.write_bytes(original + f"\n# edit {run}\n".encode())
            time.sleep(1.2)
            wall, cpu, peak, err = timed([binary, "index", "build", "--root", str(root)])
            assert ", 1 file read" in err, err
            onechange.append((wall, cpu, peak))
    finally:
        edited.write_bytes(original)
    # The index as a fresh build of the unedited tree leaves it, for the queries.
    subprocess.run(["rm", "-rf", str(root / "references")], check=True)
    timed([binary, "index", "build", "--root", str(root)])
    source_mb = float(summary.split("(")[1].split(" MB")[0])
    med = lambda rows, i: statistics.median(r[i] for r in rows)
    return source_mb, {
        "full": (med(full, 0), med(full, 1), med(full, 2)),
        "nochange": (med(nochange, 0), med(nochange, 1), med(nochange, 2)),
        "onechange": (med(onechange, 0), med(onechange, 1), med(onechange, 2)),
    }


def serve(binary, root: Path, tool, queries, options=()):
    """A fresh server started with `options`: (first call ms, VmRSS KiB after it, VmHWM KiB, warm
    ms list, every answer's text)."""
    proc, call = rpc_session(binary, str(root), options=options)
    times, answers = [], []
    for q in queries:
        t0 = time.perf_counter()
        reply = call("tools/call", {"name": tool, "arguments": {"query": q, "k": 20}})
        times.append((time.perf_counter() - t0) * 1e3)
        if "result" not in reply or reply["result"].get("isError"):
            sys.exit(f"{tool} {q!r}: {reply}")
        text = reply["result"]["content"][0]["text"]
        if tool == "query_code" and '"path"' not in text:
            sys.exit(f"{tool} {q!r}: no hits: {text[:200]}")
        answers.append(text)
        if len(times) == 1:
            after_first = status(proc.pid, "VmRSS")
    peak = status(proc.pid, "VmHWM")
    proc.stdin.close()
    proc.wait()
    return times[0], after_first, peak, times[1:], answers


def queries_for(binary, root, tool, pool, runs, count):
    firsts, rss, peaks, warm = [], [], [], []
    for run in range(runs):
        qs = [pool[(run + i) % len(pool)] for i in range(count + 1)]
        first, after, peak, rest, _ = serve(binary, root, tool, qs)
        firsts.append(first)
        rss.append(after)
        peaks.append(peak)
        warm.extend(rest)
    warm.sort()
    return (statistics.median(firsts), statistics.median(rss), statistics.median(peaks),
            warm[len(warm) // 2], warm[min(len(warm) - 1, len(warm) * 99 // 100)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/agentteams-mcp")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("roots", nargs="+")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    for root in map(Path, args.roots):
        root = root.resolve()
        source_mb, b = builds(binary, root, args.runs)
        sizes = references_bytes(root)
        index_mb = sum(v for k, v in sizes.items() if k.endswith(".json")) / 1e6
        cache_mb = sizes.get("code-build-cache.bin", 0) / 1e6
        full_wall = b["full"][0]
        print(f"{root.name}: {source_mb:.1f} MB of source")
        print(f"  full build: {full_wall:.2f} s wall ({source_mb / full_wall:.1f} MB/s), "
              f"{b['full'][1]:.2f} s CPU ({source_mb / b['full'][1]:.1f} MB/s), peak {b['full'][2] / 1024:.0f} MiB")
        for name, label in (("nochange", "nothing changed"), ("onechange", "one file edited")):
            wall, _, peak = b[name]
            print(f"  rebuild, {label}: {wall:.2f} s ({100 * wall / full_wall:.1f} % of full), peak {peak / 1024:.0f} MiB")
        print(f"  index: {index_mb:.1f} MB of JSON (local.json {sizes.get('code-index/local.json', 0) / 1e6:.1f}, "
              f"outline {sizes.get('code-outline.json', 0) / 1e6:.1f}), build cache {cache_mb:.1f} MB")
        for tool, pool in (("query_code", CODE_QUERIES), ("query_index", INDEX_QUERIES)):
            first, rss, peak, p50, p99 = queries_for(binary, root, tool, pool, args.runs, args.queries)
            print(f"  {tool}: first {first:.1f} ms (resident {rss / 1024:.0f} MiB after it, peak {peak / 1024:.0f} MiB), "
                  f"warm p50 {p50:.2f} ms p99 {p99:.2f} ms")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
