#!/usr/bin/env python3
"""Parity check against the reference implementation (jlcatonjr/agentteams, Python).

Builds the reference's local code partition and memory index for a project with the reference's
own code, then compares them with the indexes `agentteams-mcp index build` wrote (postings, lengths,
N, avgdl, hashes, paragraphs), and compares query results: the reference's scorer over its own
partition against the product's recall over the product's index (scores, order, paths).

With --compat reference the binary runs as `--compat reference`, which must match the reference
exactly (scores, order, paths as stored, titles, snippets): the check the issue's "parity" means.
Without it the product's default ranking is compared, which may differ by design.

usage: parity.py --ref REF_CHECKOUT --bin BINARY --root PROJECT [--queries N] [--compat reference]
"""
import argparse, json, os, random, subprocess, sys
from pathlib import Path


def rpc_session(binary, root, compat=None, options=()):
    extra = (["--compat", compat] if compat else []) + list(options)
    proc = subprocess.Popen([binary, "--serve-mcp", "recall", "--root", root, *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ids = iter(range(1, 10**9))

    def call(method, params):
        msg = {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "parity", "version": "1"}})
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    return proc, call


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--compat", choices=["reference"])
    args = ap.parse_args()
    sys.path.insert(0, args.ref)
    from agentteams import code_index as ci, memory_index as mi
    from agentteams.cli import artifacts as art

    root = Path(args.root).resolve()
    ours_dir = root / "references" / "code-index"
    ours = json.loads((ours_dir / "local.json").read_text())
    rel_paths = [Path(d["path"]) for d in ours["documents"]]
    ref_sources = art._code_index_sources({"existing_project_path": str(root)}, root / "x" / "y")
    ref_own = ci.build_code_partition(ci.local_units(ref_sources), source_kind="local-script")
    problems = []
    ref_rel = [str(Path(d["path"]).relative_to(root)) for d in ref_own["documents"]]
    # Our builder stores absolute paths, as the reference's does; compared relative to the root.
    ours_py = [str(Path(d["path"]).relative_to(root)) if Path(d["path"]).is_absolute() else d["path"]
               for d in ours["documents"] if d["language"] in ("python", "shell")]
    if ref_rel != ours_py:
        problems.append(f"python/shell document lists differ: ref {len(ref_rel)} ours {len(ours_py)}")
    # The product indexes more languages; scores depend only on tokens, so the reference's
    # builder and scorer run over the product's file list (other languages get generic passages).
    ref = ci.build_code_partition(ci.local_units([root / p for p in rel_paths]),
                                  source_kind="local-script")
    if True:
        for key in ("N", "avgdl"):
            if ref[key] != ours[key]:
                problems.append(f"{key}: ref {ref[key]!r} ours {ours[key]!r}")
        if ref["postings"] != ours["postings"]:
            problems.append("postings differ")
        for a, b in zip(ref["documents"], ours["documents"]):
            for key in ("length", "source_hash", "vector_norm_sq", "source_mtime", "title"):
                if a[key] != b[key]:
                    problems.append(f"{b['path']}: {key} ref {a[key]!r} ours {b[key]!r}")
                    break
    print(f"code partition: {len(ours['documents'])} documents, {len(ours['postings'])} terms; "
          f"{'identical postings/lengths/hashes' if not problems else 'DIFFERENCES'}")

    mem_ours = json.loads((root / "references" / "memory-index.json").read_text())
    mem_ref = mi.build_memory_index(art._memory_index_sources({"existing_project_path": str(root)},
                                                              root / "x" / "y"), root=root)
    for key in ("N", "avgdl", "source_count", "postings", "source_fingerprint"):
        if mem_ref[key] != mem_ours[key]:
            problems.append(f"memory {key} differs")
    for a, b in zip(mem_ref["documents"], mem_ours["documents"]):
        if a != b:
            problems.append(f"memory document {b['path']} differs: " + ", ".join(
                k for k in a if a[k] != b.get(k)))
    print(f"memory index: {mem_ours['N']} documents; {'identical' if not any(p.startswith('memory') for p in problems) else 'DIFFERENCES'}")

    # Queries: words drawn from the postings, one to three per query.
    rng = random.Random(7)
    terms = sorted(ours["postings"])
    queries = [" ".join(rng.choice(terms) for _ in range(rng.randint(1, 3))) for _ in range(args.queries)]
    proc, call = rpc_session(args.bin, str(root), args.compat)
    mismatches = 0
    for q in queries:
        want = ci.query_partitions({"local": ref}, q, k=20, kind="all")
        # The local partition on both sides (the API partitions are compared by
        # shared_indexes.py: the reference's builder fills them from its own environment).
        reply = call("tools/call", {"name": "query_code",
                                    "arguments": {"query": q, "k": 20, "kind": "local"}})
        got = json.loads(reply["result"]["content"][0]["text"])["hits"]
        # The reference's partition here was built over absolute paths; ours stores what our
        # builder stores. Both are compared as project-relative paths.
        rel = lambda p: str(Path(p).relative_to(root)) if Path(p).is_absolute() else p
        w = [(rel(h["path"]), h["score"], h["confidence"]) for h in want]
        g = [(rel(h["path"]), h["score"], h["confidence"]) for h in got]
        if w != g:
            mismatches += 1
            if mismatches <= 3:
                problems.append(f"query {q!r}: ref {w[:3]} ours {g[:3]}")
    mem_terms = sorted(mem_ours["postings"]) or ["nothing"]
    for q in [" ".join(rng.choice(mem_terms) for _ in range(rng.randint(1, 3))) for _ in range(args.queries)]:
        want = mi.query_index(mem_ref, q, k=20)
        reply = call("tools/call", {"name": "query_index", "arguments": {"query": q, "k": 20}})
        got = json.loads(reply["result"]["content"][0]["text"])["hits"]
        w = [(h["path"], h["score"], h["confidence"], h["snippet"], h["title"]) for h in want]
        g = [(h["path"], h["score"], h["confidence"], h["snippet"], h["title"]) for h in got]
        if w != g:
            mismatches += 1
            if mismatches <= 6:
                problems.append(f"memory query {q!r}: ref {w[:2]} ours {g[:2]}")
    proc.stdin.close()
    proc.wait()
    print(f"queries: {2 * args.queries} compared, {mismatches} differ")
    for p in problems[:20]:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
