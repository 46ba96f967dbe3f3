#!/usr/bin/env python3
"""Source-selection parity with the reference implementation (jlcatonjr/agentteams, Python).

Builds a tricky fixture project (nested dirs, scratch dirs, a project description with globs using
`**`, `*`, `?`, `[...]`, `[!...]`, plain extra dirs, `..` steps, excludes, and symlinks: an alias
of a directory inside the project, links to a directory and a file outside it, a symlink loop),
runs `agentteams-mcp index build` on it, and compares:
  - the memory index's document paths (in order), source_count and project_name with the
    reference's `_memory_index_sources` fed to its `build_memory_index` (project name by its
    `_resolve_project_name`);
  - the local code partition's document paths with the reference's `_code_index_sources`
    (the product also indexes more languages; those paths are listed apart, not as differences).
Both run twice: on a plain directory (the fallback walk) and on a git work tree (`git ls-files`).

`memory_index_exclude` is in the spec (REFERENCE-BEHAVIOUR.md §6.1 item 6) but not in the
reference's code at the mirrored HEAD; this script applies the spec's rule to the reference's source
list (`exclude_like_spec` below) and says so in its output.

usage: sources_parity.py --ref REF_CHECKOUT --bin BINARY [--keep]
  REF_CHECKOUT: a directory holding the reference's `agentteams/` package and `schemas/`, e.g.
    mkdir /tmp/refsrc && cd /tmp/refsrc && R=/work/.mirror/jlcatonjr+agentteams/repo &&
    git -C $R ls-tree -r --name-only HEAD agentteams schemas |
      while read f; do mkdir -p "$(dirname "$f")"; git -C $R show "HEAD:$f" > "$f"; done
  Run with a Python that has the reference's dependencies (jsonschema), e.g.
  /tmp/agentteams-bench-pyenv/bin/python. Exit status 1 when anything differs.
"""
import argparse, fnmatch, json, os, shutil, subprocess, sys, tempfile
from pathlib import Path

PROSE = "Gear trains transfer rotation between shafts using meshed sprockets and careful lubrication."

MARKDOWN = [
    "README.md", "CHANGELOG.md", "build-team-plan.md",
    "workSummaries/2026/01/a.md", "workSummaries/b.md", "workSummaries/__pycache__/c.md",
    "docs_src/intro.md", "docs_src/nested/not-scanned.md",
    "references/plans/p.md", "references/.venv/skip.md",
    "guides/a.md", "guides/B.md", "guides/sub/deep/c.md", "guides/drafts/d.md",
    "guides/drafts-old/e.md", "guides/node_modules/pkg/f.md", "guides/upper.MD", "guides/.md",
    "guides/z.txt",
    "notes/n1.md", "notes/n2.md", "notes/nx.md", "notes/scratch.tmp.md", "notes/deep/n3.md",
    "archive/2025/q1/old.md", "archive/2025/q2/older.md", "archive/2024/ancient.md",
    "-dash/first.md",
]
CODE = [
    "app/main.py", "app/util.sh", "app/run.bash", "app/UPPER.PY", "app/lib.rs", "app/web.ts",
    "tmp/tools/helper.py", "tmp/tools/notes.txt", "tmp/tools/deep/inner.sh", "tmp/gen/make.sh",
    "tmp/gen/Build.PY", "build/out.py", ".hidden/secret.py",
]
OUTSIDE = ["o.md", "o.py", "sub/o2.md"]


def make_fixture(base: Path, name: str) -> tuple[Path, Path]:
    root = base / name
    outside = base / f"{name}-outside"
    for rel in MARKDOWN:
        write(root / rel, f"# {rel}\n\n{PROSE}\n")
    for number, rel in enumerate(CODE):
        write(root / rel, f"def f_{number}():\n    return 'sprocket gear {rel}'\n")
    for rel in OUTSIDE:
        write(outside / rel, f"# outside {rel}\n\n{PROSE}\ndef leaked(): pass\n")
    (root / "guides/dir.md").mkdir(parents=True)
    os.symlink(root / "guides", root / "alias")                  # alias inside the project
    os.symlink(outside, root / "out")                            # directory outside
    os.symlink(outside / "o.md", root / "guides/link-out.md")    # file outside
    os.symlink(outside / "o.py", root / "tmp/tools/link-out.py")
    os.symlink(root / "notes/n1.md", root / "guides/link-in.md")  # file inside
    os.symlink(outside / "o.md", root / "references/leak.md")    # built-in scan, file outside
    (root / "loop").mkdir()
    os.symlink(root / "loop", root / "loop/self")                # a cycle
    write(root / "loop/l.md", f"# loop\n\n{PROSE}\n")
    (root / ".claude/agents").mkdir(parents=True)
    description = {
        "project_goal": "Parity fixture",
        "project_name": "",
        "existing_project_path": f"/srv/{name}-project/",
        "memory_index_extra_dirs": [
            "guides", "notes/n?.md", "notes/[!n]*", "notes/n[0-9].md", "archive/**/*.md",
            "archive/*/q[12]/*.md", "alias", "alias/*.md", "out", "out/*.md", "loop/*/*/*.md",
            "../" + name + "/guides/*.md", "./docs_src/", "-dash", "missing", 7, "  ", "/etc",
            "guides/a.md",
        ],
        "memory_index_exclude": [
            "guides/drafts/", "*.tmp.md", " notes/deep ", "archive/2024/*", "/abs", 3, "",
        ],
        "code_index_extra_dirs": [
            "tmp/tools", "tmp/gen/*.sh", "tmp/gen/*.PY", "tmp/**/*.py", "out", "out/*.py",
            "../" + name + "/tmp/gen/*.sh", "app", "/usr/bin", "build",
        ],
    }
    write(root / ".agentteams/brief.json", json.dumps(description, indent=2))
    return root, outside


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def exclude_like_spec(sources, root: Path, entries):
    """REFERENCE-BEHAVIOUR.md §6.1 item 6 (not in the reference's code at the mirrored HEAD)."""
    rules = []
    for raw in entries if isinstance(entries, list) else []:
        if not isinstance(raw, str) or not raw.strip():
            continue
        entry = raw.strip()
        if Path(entry).is_absolute():
            continue
        rules.append(entry.rstrip("/"))

    def excluded(path: Path) -> bool:
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            return False
        for rule in rules:
            if any(ch in rule for ch in "*?["):
                if fnmatch.fnmatch(rel, rule):
                    return True
            elif rel == rule or rel.startswith(rule + "/"):
                return True
        return False

    return [p for p in sources if not excluded(p)]


def drop_links_out(paths, root: Path, refused: list):
    """The product's deliberate difference: a source whose realpath is outside the project is not
    indexed, whichever scan found it (the reference checks only the extra entries)."""
    kept = []
    for p in paths:
        if Path(os.path.realpath(p)).is_relative_to(root):
            kept.append(p)
        else:
            refused.append(str(Path(p).relative_to(root)))
    return kept


def reference_view(root: Path):
    from agentteams.analyze import _resolve_project_name
    from agentteams.cli.artifacts import _code_index_sources, _memory_index_sources
    from agentteams.memory_index import build_memory_index

    description = json.loads((root / ".agentteams/brief.json").read_text())
    # The fields `build_manifest` copies; the project root given explicitly, as `index build --root`.
    manifest = {
        "project_name": _resolve_project_name(description),
        "framework": "",
        "existing_project_path": str(root),
        "memory_index_extra_dirs": description.get("memory_index_extra_dirs") or [],
        "code_index_extra_dirs": description.get("code_index_extra_dirs") or [],
    }
    output_dir = root / ".claude/agents"
    refused = []
    sources = _memory_index_sources(manifest, output_dir)
    sources = exclude_like_spec(sources, root, description.get("memory_index_exclude"))
    sources = drop_links_out(sources, root, refused)
    index = build_memory_index(sources, project_name=manifest["project_name"], root=root)
    code = drop_links_out(_code_index_sources(manifest, output_dir), root, refused)
    code = [str(Path(p).relative_to(root)) for p in code]
    return {
        "refused": refused,
        "project_name": index["project_name"],
        "memory_paths": [d["path"] for d in index["documents"]],
        "source_count": index["source_count"],
        "code_paths": code,
    }


def product_view(binary: str, root: Path):
    out = subprocess.run([binary, "index", "build", "--root", str(root), "--team-dir", ".claude/agents"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"index build failed: {out.stderr}")
    refs = root / ".claude/agents/references"
    memory = json.loads((refs / "memory-index.json").read_text())
    local = json.loads((refs / "code-index/local.json").read_text())
    return {
        "project_name": memory["project_name"],
        "memory_paths": [d["path"] for d in memory["documents"]],
        "source_count": memory["source_count"],
        "code_paths": [d["path"] for d in local["documents"]],
    }


def compare(label: str, ours: dict, ref: dict) -> int:
    differences = 0
    for key in ("project_name", "source_count", "memory_paths"):
        if ours[key] != ref[key]:
            differences += 1
            print(f"[{label}] {key} differs:\n  ours:      {ours[key]}\n  reference: {ref[key]}")
    reference_suffixes = (".py", ".sh", ".bash")
    ours_ref_langs = [p for p in ours["code_paths"] if Path(p).suffix.lower() in reference_suffixes]
    if ours_ref_langs != ref["code_paths"]:
        differences += 1
        print(f"[{label}] code paths differ:\n  ours:      {ours_ref_langs}\n  reference: {ref['code_paths']}")
    extra = [p for p in ours["code_paths"] if Path(p).suffix.lower() not in reference_suffixes]
    print(f"[{label}] memory: {len(ours['memory_paths'])} documents, source_count {ours['source_count']}, "
          f"project_name {ours['project_name']!r}; code: {len(ours_ref_langs)} .py/.sh/.bash paths; "
          f"product-only languages: {extra}; reference sources linking out of the project, "
          f"deliberately not indexed by the product: {ref['refused']}; differences: {differences}")
    return differences


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ref", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(args.ref).resolve()))
    binary = str(Path(args.bin).resolve())
    base = Path(tempfile.mkdtemp(prefix="sources-parity-")).resolve()
    print("memory_index_exclude: the reference's HEAD has no such field; its source list is "
          "filtered here with the spec's rule (§6.1 item 6)")
    total = 0
    try:
        for name, use_git in (("plain", False), ("gitrepo", True)):
            root, _ = make_fixture(base, name)
            if use_git:
                write(root / ".gitignore", "tmp/gen/\n*.bash\n")
                git = ["git", "-C", str(root), "-c", "user.name=p", "-c", "user.email=p@p"]
                subprocess.run(git + ["init", "-q"], check=True)
                subprocess.run(git + ["add", "app", "guides", "README.md"], check=True)
                subprocess.run(git + ["commit", "-qm", "fixture"], check=True)
            ref = reference_view(root)
            ours = product_view(binary, root)
            total += compare(name, ours, ref)
    finally:
        if args.keep:
            print(f"fixtures kept under {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    print(f"total differences: {total}")
    sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()
