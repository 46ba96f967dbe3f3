#!/usr/bin/env python3
"""Indexes shared both ways with the reference implementation (jlcatonjr/agentteams, Python).

1. `agentteams-mcp index build` writes the project's indexes; the reference's own staleness
   functions (`memory_index.is_index_stale`, `code_index.is_partition_stale`,
   `code_sources.compute_dependency_fingerprint`) judge them, run in a separate Python process
   from the project root and from another directory, in the project's environment (`python3 -S`
   with the project's `.venv` site-packages, if any, on the path: what `importlib.metadata`
   sees when the reference CLI runs from that environment). Every kind must be fresh.
2. The reference's own writer (`_write_code_index`) then rebuilds the code index in place, and
   the product's recall serves those files: under `--compat reference` its hits must be the
   reference's scorer's hits over the same partitions, paths as stored; by default every hit
   must be one of those documents, its path shown project-relative.

usage: shared_indexes.py --ref REF_CHECKOUT --bin BINARY --root PROJECT [--queries N]
"""
import argparse, glob, json, os, random, subprocess, sys, tempfile
from pathlib import Path

from parity import rpc_session

CHECK = r"""
import json, sys
from pathlib import Path
root = Path(sys.argv[1])
from agentteams import code_index as ci, code_sources as cs, memory_index as mi
from agentteams.cli import artifacts as art
from agentteams.cli import code_index_artifacts as cia
manifest = {"existing_project_path": str(root)}
out = {}
mem = json.loads((root / "references" / "memory-index.json").read_text())
out["memory"] = mi.is_index_stale(mem, art._memory_index_sources(manifest, root), root=root)
sources = cia._code_index_sources(manifest, root)
cache = root / "references" / "code-index"
local = json.loads((cache / "local.json").read_text())
out["local"] = ci.is_partition_stale(local, sources)
fp = cs.compute_dependency_fingerprint(sources, root)
for name in ("api-modules", "api-docs"):
    part = json.loads((cache / (name + ".json")).read_text())
    out[name] = ci.is_partition_stale(part, dependency_fingerprint=fp)
print(json.dumps(out))
"""


def reference_env(ref: str, root: Path):
    site = sorted(glob.glob(str(root / ".venv" / "lib" / "python3*" / "site-packages")))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ref, *site])
    return env


def staleness(ref: str, root: Path, cwd: Path):
    out = subprocess.run([sys.executable, "-S", "-c", CHECK, str(root)], cwd=cwd,
                         env=reference_env(ref, root), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"reference check failed from {cwd}:\n{out.stderr}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args()
    root = Path(args.root).resolve()
    problems = []

    build = subprocess.run([args.bin, "index", "build", "--root", str(root)],
                           capture_output=True, text=True)
    if build.returncode != 0:
        raise SystemExit(build.stderr)
    with tempfile.TemporaryDirectory() as elsewhere:
        for cwd in (root, Path(elsewhere)):
            result = staleness(args.ref, root, cwd)
            label = "root" if cwd == root else "another directory"
            print(f"reference staleness of our indexes from {label}: {result}")
            problems += [f"{k} stale from {label}" for k, v in result.items() if v]

    # The reference rebuilds the code index with its own writer; our recall serves it.
    sys.path.insert(0, args.ref)
    from agentteams import code_index as ci
    from agentteams.cli import code_index_artifacts as cia
    cia._write_code_index({"existing_project_path": str(root)}, root)
    cache = root / "references" / "code-index"
    parts = {}
    for name, meta in json.loads((cache / "manifest.json").read_text())["partitions"].items():
        parts[name] = json.loads((cache / meta.get("file", name + ".json")).read_text())
    terms = sorted(parts["local"]["postings"])
    rng = random.Random(11)
    queries = [" ".join(rng.choice(terms) for _ in range(rng.randint(1, 3)))
               for _ in range(args.queries)]
    stored = {d["path"] for part in parts.values() for d in part["documents"]}
    shown_paths = {str(Path(p).relative_to(root)) if Path(p).is_absolute() else p for p in stored}
    for compat in (None, "reference"):
        proc, call = rpc_session(args.bin, str(root), compat)
        differ = 0
        for q in queries:
            reply = call("tools/call", {"name": "query_code", "arguments": {"query": q, "k": 10}})
            got = json.loads(reply["result"]["content"][0]["text"])["hits"]
            if compat:
                # The reference's scorer: its hits exactly, paths as stored.
                want = ci.query_partitions(parts, q, k=10, kind="all")
                w = [(h["path"], h["score"]) for h in want]
                g = [(h["path"], h["score"]) for h in got]
            else:
                # The default ranking is the product's: every hit is a stored document, shown
                # project-relative.
                w = []
                g = [h["path"] for h in got if h["path"] not in shown_paths]
            if w != g:
                differ += 1
                if differ <= 3:
                    problems.append(f"{compat or 'default'} {q!r}: ref {w[:2]} ours {g[:2]}")
        proc.stdin.close()
        proc.wait()
        print(f"our recall ({compat or 'default'}) over the reference's code index: "
              f"{len(queries)} queries, {differ} wrong")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
