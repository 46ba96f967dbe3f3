#!/usr/bin/env python3
"""recall and `index build` benchmark on the Python standard library (a corpus every machine here has).

Copies the interpreter's stdlib (minus site-packages and caches) to a temporary project, adds a
markdown corpus for the memory index (one document per module: its name and docstring, under
references/modules/), then measures:
  - build: wall and CPU time of `agentteams-mcp index build` (fresh, median of --builds runs),
    MB/s of indexed source, index size on disk;
  - cold, in new processes (`recall_bench once`): a process that reads and parses the index
    files alone against a process whose new `Recall` answers its first query (read, parse,
    validate, convert, rank), alternated, --fresh pairs; the goal's comparison, both sides
    paying the same cold-process costs (page faults of fresh memory, cold caches);
  - in process (target/release/examples/recall_bench): JSON parse time of the index files alone
    (a warm loop over bytes already in memory), cold first query of a new `Recall` in a process
    that has already parsed the file, warm p50/p99 over 200 queries per tool with k=20;
  - end to end over stdio (`agentteams-mcp --serve-mcp recall`): cold first call and warm
    p50/p99 per tool, as an MCP host sees them;
  - optionally (--ref CHECKOUT) the reference implementation on the same project: its build
    time, and its per-call load+validate+query time (the reference recall re-reads and
    re-validates on every call).

usage: bench.py [--bin target/release/agentteams-mcp] [--example target/release/examples/recall_bench]
                [--builds 3] [--queries 200] [--fresh 21] [--ref /path/to/agentteams-checkout] [--keep]
Run under `nice -n 19` on a shared machine; wall times include contention, CPU times do not.
"""
import argparse, ast, json, os, random, resource, shutil, statistics, subprocess, sys, sysconfig, tempfile, time
from pathlib import Path

from parity import rpc_session

SKIP_DIRS = {"site-packages", "__pycache__"}


def copy_stdlib(dest: Path) -> None:
    src = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(src, dest, ignore=lambda d, names: [n for n in names if n in SKIP_DIRS],
                    symlinks=True)
    modules = dest / "references" / "modules"
    modules.mkdir(parents=True)
    for py in sorted(src.rglob("*.py")):
        if any(part in SKIP_DIRS for part in py.relative_to(src).parts):
            continue
        try:
            doc = ast.get_docstring(ast.parse(py.read_text(encoding="utf-8")))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        if doc:
            name = ".".join(py.relative_to(src).with_suffix("").parts)
            (modules / f"{name}.md").write_text(f"# {name}\n\n{doc}\n", encoding="utf-8")


def cpu_of_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_run(argv):
    cpu0, t0 = cpu_of_children(), time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, cpu_of_children() - cpu0
    if out.returncode != 0:
        sys.exit(f"{argv} failed: {out.stderr}")
    return wall, cpu, out


def pct(values, p):
    values = sorted(values)
    rank = max(1, min(len(values), -(-len(values) * p // 100)))
    return values[int(rank) - 1]


def stdio_latencies(binary, root, tool, queries):
    proc, call = rpc_session(binary, str(root))
    times = []
    for q in [queries[0]] + queries:
        t0 = time.perf_counter()
        reply = call("tools/call", {"name": tool, "arguments": {"query": q, "k": 20}})
        times.append((time.perf_counter() - t0) * 1e3)
        if "result" not in reply or reply["result"].get("isError"):
            sys.exit(f"{tool}: {reply}")
    proc.stdin.close()
    proc.wait()
    return times[0], pct(times[1:], 50), pct(times[1:], 99)


def fresh_process_pairs(example, root: Path, tool, query, files, pairs):
    """Alternates `recall_bench once parse FILES` and `recall_bench once query ROOT TOOL QUERY`,
    each in a new process; returns the two lists of milliseconds (one warm-up pair dropped)."""
    parse_ms, query_ms = [], []
    for i in range(pairs + 1):
        p = float(subprocess.run([example, "once", "parse", *map(str, files)], capture_output=True,
                                 text=True, check=True).stdout)
        q = float(subprocess.run([example, "once", "query", str(root), tool, query], capture_output=True,
                                 text=True, check=True).stdout)
        if i:
            parse_ms.append(p)
            query_ms.append(q)
    return parse_ms, query_ms


def index_files(root: Path, tool):
    """The index files `tool`'s first query reads: what "parsing the index alone" parses. The
    sidecars of ours (memory sections, code outline) are read by the first query too."""
    refs = root / "references"
    if tool == "query_index":
        return [refs / "memory-index.json"] + [p for p in [refs / "memory-sections.json"] if p.exists()]
    code_files = [refs / "code-index" / f for f in
                  ("manifest.json", "local.json", "api-modules.json", "api-docs.json")]
    return code_files + [p for p in [refs / "code-outline.json"] if p.exists()]


def make_queries(root: Path, count: int):
    rng = random.Random(42)
    mem = json.loads((root / "references/memory-index.json").read_text())
    code = json.loads((root / "references/code-index/local.json").read_text())
    mem_terms, code_terms = sorted(mem["postings"]), sorted(code["postings"])
    pick = lambda terms: " ".join(rng.choice(terms) for _ in range(rng.randint(1, 3)))
    return [pick(mem_terms) for _ in range(count)], [pick(code_terms) for _ in range(count)]


def reference_numbers(ref: str, root: Path, mem_q, code_q):
    """The reference's build (code partition + memory index) and per-call query cost."""
    sys.path.insert(0, ref)
    import jsonschema
    from agentteams import code_index as ci, memory_index as mi
    from agentteams.cli import artifacts as art
    t0 = time.perf_counter()
    sources = art._code_index_sources({"existing_project_path": str(root)}, root / "x" / "y")
    part = ci.build_code_partition(ci.local_units(sources), source_kind="local-script")
    text = json.dumps(part, indent=2, sort_keys=True)
    mem = mi.build_memory_index(art._memory_index_sources({"existing_project_path": str(root)}, root / "x" / "y"), root=root)
    mem_text = json.dumps(mem, indent=2)
    build_s = time.perf_counter() - t0
    schemas = Path(ref) / "schemas"
    code_schema = json.loads((schemas / "code-index.schema.json").read_text())
    mem_schema = json.loads((schemas / "memory-index.schema.json").read_text())
    per_call = {}
    for name, data, schema, q, query in (("query_code", text, code_schema, code_q, lambda i, s: ci.query_partitions({"local": i}, s, k=20)),
                                          ("query_index", mem_text, mem_schema, mem_q, lambda i, s: mi.query_index(i, s, k=20))):
        times = []
        for s in q[:5]:
            t = time.perf_counter()
            index = json.loads(data)
            jsonschema.validate(index, schema)
            query(index, s)
            times.append((time.perf_counter() - t) * 1e3)
        per_call[name] = statistics.median(times)
    return build_s, per_call


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/agentteams-mcp")
    ap.add_argument("--example", default="target/release/examples/recall_bench")
    ap.add_argument("--fresh", type=int, default=21, help="fresh-process pairs per tool")
    ap.add_argument("--builds", type=int, default=3)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--ref")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="recall-bench-"))
    root = tmp / "stdlib"
    try:
        copy_stdlib(root)
        walls, cpus = [], []
        for _ in range(args.builds):
            shutil.rmtree(root / "references" / "code-index", ignore_errors=True)
            (root / "references" / "memory-index.json").unlink(missing_ok=True)
            wall, cpu, out = timed_run([args.bin, "index", "build", "--root", str(root)])
            walls.append(wall)
            cpus.append(cpu)
        summary = out.stderr.strip().splitlines()
        # The line with the source size and speed (other notes may follow it).
        written = next(line for line in summary if "MB of source" in line)
        src_mb = float(written.split("(")[1].split(" MB")[0])
        md_mb = sum(p.stat().st_size for p in (root / "references/modules").glob("*.md")) / 1e6
        size = {p.name: p.stat().st_size for p in (root / "references").rglob("*.json")}
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        print("build:", *summary, sep="\n  ")
        print(f"  median of {args.builds}: {wall:.2f} s wall, {cpu:.2f} s CPU; "
              f"{src_mb + md_mb:.1f} MB of source (code {src_mb:.1f} + markdown {md_mb:.1f}): "
              f"{(src_mb + md_mb) / wall:.1f} MB/s wall, {(src_mb + md_mb) / cpu:.1f} MB/s CPU")
        print("  index size: " + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in sorted(size.items())))
        mem_q, code_q = make_queries(root, args.queries)
        qfile = tmp / "queries.tsv"
        qfile.write_text("".join(f"index\t{q}\n" for q in mem_q) + "".join(f"code\t{q}\n" for q in code_q))
        res = json.loads(subprocess.run([args.example, str(root), str(qfile)], capture_output=True,
                                        text=True, check=True).stdout)
        print("in process (ms):")
        for tool, index in (("query_index", "memory"), ("query_code", "code")):
            pmin, pmed = res[f"parse_{index}_min_ms"], res[f"parse_{index}_median_ms"]
            cmin, cmed = res[f"{tool}_cold_min_ms"], res[f"{tool}_cold_median_ms"]
            print(f"  {tool}: parse alone min {pmin:.1f} median {pmed:.1f}; cold first query min {cmin:.1f} "
                  f"median {cmed:.1f} ({cmin / pmin:.2f}x / {cmed / pmed:.2f}x parse); "
                  f"warm p50 {res[f'{tool}_warm_p50_ms']:.3f} p99 {res[f'{tool}_warm_p99_ms']:.3f} "
                  f"over {res[f'{tool}_queries']} queries, k=20")
        print(f"cold, each in a new process (ms, {args.fresh} alternated pairs; the goal's comparison):")
        for tool, q, files in (("query_index", mem_q, index_files(root, "query_index")),
                               ("query_code", code_q, index_files(root, "query_code"))):
            parse_ms, query_ms = fresh_process_pairs(args.example, root, tool, q[0], files, args.fresh)
            pmed, qmed = statistics.median(parse_ms), statistics.median(query_ms)
            paired = statistics.median(qv / pv for pv, qv in zip(parse_ms, query_ms))
            print(f"  {tool}: read + parse alone min {min(parse_ms):.1f} median {pmed:.1f}; first query "
                  f"min {min(query_ms):.1f} median {qmed:.1f} ({qmed / pmed:.2f}x by medians, "
                  f"{paired:.2f}x median of paired ratios)")
        print("over stdio (ms):")
        for tool, q in (("query_index", mem_q), ("query_code", code_q)):
            cold, p50, p99 = stdio_latencies(args.bin, root, tool, q)
            print(f"  {tool}: cold {cold:.1f}, warm p50 {p50:.3f} p99 {p99:.3f}")
        if args.ref:
            build_s, per_call = reference_numbers(args.ref, root, mem_q, code_q)
            print(f"reference (Python): build {build_s:.2f} s wall in process "
                  f"({(src_mb + md_mb) / build_s:.1f} MB/s); per call (load + validate + query, median of 5): "
                  + ", ".join(f"{k} {v:.0f} ms" for k, v in per_call.items()))
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
