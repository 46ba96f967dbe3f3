#!/usr/bin/env python3
"""Python passage parity: the reference's passages (CPython's ast, ast.unparse) against ours.

For every .py file under PROJECT, computes the passages the reference's builder gives it
(`agentteams.code_index._extract_passages`, imported from a checkout of the reference) and
compares them with the passages `agentteams-mcp index build` wrote to
references/code-index/local.json (paths there are relative to PROJECT). Prints the files and
passages compared, the differences by category with a few examples each, and a digest of everything
in the partition that is not passage text (postings, lengths, hashes), which must not change when
only the passage renderer changes.

usage: pysig_parity.py --ref REF_CHECKOUT --bin BINARY --root PROJECT [--examples N] [--no-build]

  REF_CHECKOUT: git -C <reference repo> archive HEAD agentteams | tar -x -C REF_CHECKOUT
  PROJECT: a copy of the Python standard library, e.g.
    cp -r "$(python3 -c 'import sysconfig;print(sysconfig.get_paths()["stdlib"])')" /tmp/std/lib
  or broken and unusual sources: pysig_mutate.py (edited real files), pysig_headers.py (random
  headers).

Differences are grouped by kind: "fallback (syntax error: ...)" when the reference falls back to
generic passages and we do not (CPython's message says why), "arguments"/"class bases" when a
signature differs (with the construct passages.rs prints as written, when one is present),
"docstring", "passage count".
"""
import argparse, ast, collections, hashlib, json, re, shutil, subprocess, sys
from pathlib import Path

DASH = " \u2014 "


def reference_kind(text):
    """Why the reference gives a file the passages it does."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return f"syntax error: {e.msg}"
    except ValueError:
        return "syntax error: ValueError"
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in tree.body):
        return "definitions"
    return "no-definitions"


# Constructs passages.rs prints as source text (see its module docs), by a pattern in our text.
UNMODELLED = [
    (r"(?<![A-Za-z0-9_])[fF][rR]?['\"]|(?<![A-Za-z0-9_])[rR][fF]['\"]", "f-string (printed as written)"),
    (r"\\N\{", "\\N{...} escape (printed as written)"),
]


def categorise(ref, ours, kind):
    """The category of one file's difference, with the first differing pair."""
    if kind != "definitions":
        return f"fallback ({kind})", (ref[:1], ours[:1])
    if len(ref) != len(ours):
        pairs = list(zip(ref, ours))
        first = next(((r, o) for r, o in pairs if r != o), (ref[len(pairs):][:1], ours[len(pairs):][:1]))
        return "passage count", first
    for r, o in zip(ref, ours):
        if r == o:
            continue
        r_sig, _, r_doc = r.partition(DASH)
        o_sig, _, o_doc = o.partition(DASH)
        if r_sig == o_sig:
            return "docstring", (r, o)
        what = "class bases" if r.startswith("class") or o.startswith("class") else "arguments"
        for marker, reason in UNMODELLED:
            if re.search(marker, o_sig):
                return f"{what}: {reason}", (r_sig, o_sig)
        return what, (r_sig, o_sig)
    return None, None


def non_passage_digest(partition):
    """SHA-256 over the partition without passage text, snippets and build stamps."""
    docs = [{k: v for k, v in d.items() if k not in ("passages", "snippet", "source_mtime")}
            for d in partition["documents"]]
    body = {"postings": partition["postings"], "documents": docs,
            "N": partition["N"], "avgdl": partition["avgdl"]}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--examples", type=int, default=3)
    ap.add_argument("--no-build", action="store_true", help="reuse the existing local.json")
    args = ap.parse_args()
    sys.path.insert(0, args.ref)
    from agentteams import code_index as ci

    root = Path(args.root).resolve()
    if not args.no_build:
        # The builder reuses the documents of unchanged files: start from no index.
        shutil.rmtree(root / "references", ignore_errors=True)
        subprocess.run([args.bin, "index", "build", "--root", str(root)], check=True,
                       stderr=subprocess.DEVNULL)
    partition = json.loads((root / "references/code-index/local.json").read_text())
    ours_by_path = {d["path"]: d["passages"] for d in partition["documents"]}

    files = passages = 0
    differing = collections.Counter()
    examples = collections.defaultdict(list)
    missing = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("references/"):
            continue
        text = ci.read_text_or_none(path)
        if text is None:
            continue
        if rel not in ours_by_path:
            missing.append(rel)
            continue
        ref = ci._extract_passages(text, "python")
        ours = ours_by_path[rel]
        files += 1
        passages += len(ref)
        if ref == ours:
            continue
        category, pair = categorise(ref, ours, reference_kind(text))
        differing[category] += 1
        if len(examples[category]) < args.examples:
            examples[category].append((rel, pair))

    print(f"files compared: {files}; reference passages compared: {passages}")
    print(f"files differing: {sum(differing.values())}")
    for category, count in differing.most_common():
        print(f"  {category}: {count} files")
        for rel, (r, o) in examples[category]:
            print(f"    {rel}\n      reference: {r!r}\n      ours:      {o!r}")
    if missing:
        print(f"not in our partition (the builder skipped them): {len(missing)}, e.g. {missing[:3]}")
    print(f"non-passage digest: {non_passage_digest(partition)}")


if __name__ == "__main__":
    main()
