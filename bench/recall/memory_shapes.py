#!/usr/bin/env python3
"""Peak memory of `agentteams-mcp --serve-mcp recall` against the bytes of the index it reads, for
index shapes chosen to inflate once loaded (SECURITY.md, recall, "Bounded").

For each shape it writes a schema-valid index into a fresh temporary project, starts a fresh
server process under `/usr/bin/time -v`, sends `initialize` and the same query three times
(`query_index`, or `query_code` for code shapes), and reports the process's maximum resident set
size, the index bytes and their ratio, and the wall time of each call (a repeated call that re-reads
a partition shows up there). The goal is a ratio of at most 3 for every shape.

Shapes:
  empty-paragraphs   memory index, documents of 80,000 empty paragraphs each (the finding)
  blank-paragraphs   the same with one-space paragraphs (not empty, yet no token)
  long-documents     documents of 8,000,000 empty paragraphs each (more tokens than one member
                     may span as a tree, MAX_MEMBER_TOKENS)
  tiny-documents     memory index of minimal documents with no paragraphs
  tiny-terms         memory index whose postings are many terms with one posting each
  long-postings      memory index with a few terms posted in every document
  code-partitions    30 code partitions (5 MiB each) of documents with 5,000 empty passages (the finding)
  code-realistic     30 code partitions of documents with ten passages each and their postings

Shapes the streaming path declines, so the file is parsed whole (a tree), at most 30 MiB of file
(MAX_TREE_INDEX_BYTES is 32 MiB): a value shadowed by a repeated key (only the last counts, the
first is never validated) of the most inflating kinds, and the common layout with a repeated key.
Past the tree budget (TREE_BUDGET_PERCENT_OF_FILE, TREE_BUDGET_FLOOR_BYTES) each call is refused
with an error naming the file and the limit (shown after the row); the figure is the peak of that.
  shadowed-numbers   "framework": [0,0,...] before the real "framework" (a Value per 2 bytes)
  shadowed-arrays    "framework": [[],[],...]
  shadowed-objects   "framework": {"a":{},"a":{},...} (a map entry and a key per 7 bytes)
  shadowed-strings   "framework": ["a","a",...] (a Value and a String per 4 bytes)
  repeated-posting-keys  one document, postings {"doc_id":0,"doc_id":0,"tf":1} (the common
                     layout with a repeated key: about ten bytes of tree per byte)
  repeated-key-paragraphs  one document of 1 KB paragraphs and a repeated "N": parsed whole,
                     its tree about the size of the file, so it is served

usage: memory_shapes.py [--bin target/release/agentteams-mcp] [--mib 119] [--shape NAME ...] [--keep]
                        [--runs N]
--mib scales every memory-index shape (the code shape is 30 x mib/24 MiB, 151 MiB at the default).
"""
import argparse, json, os, re, shutil, subprocess, sys, tempfile, time
from pathlib import Path

MEMORY_HEAD = ('{"artifact_type": "memory-index", "memory_index_schema_version": "1.3", '
               '"project_name": "p", "framework": "", "built_at": "2026-10-07T12:34:56Z", ')
WORDS = ("widget gear bolt nut axle spring lever cam piston valve rotor stator flange gasket "
         "bearing shaft coupling sprocket pulley chain").split()


def memory_index(path: Path, docs, postings: str, n: int) -> None:
    with open(path, "w") as f:
        f.write(MEMORY_HEAD + f'"source_count": {n}, "documents": [')
        first = True
        for doc in docs:
            if not first:
                f.write(",")
            first = False
            f.write(doc)
        f.write(f'], "postings": {postings}, "avgdl": 1.0, "N": {n}}}')


def memory_doc(i: int, paragraphs: str = "") -> str:
    return (f'{{"doc_id":{i},"path":"d{i}.md","title":"t","length":1,"snippet":"s",'
            f'"paragraphs":[{paragraphs}],"source_mtime":0}}')


def shape_paragraphs(root: Path, size: int, item: str, per_doc: int = 80_000) -> str:
    paragraphs = ",".join([item] * per_doc)
    n = max(1, size // (len(paragraphs) + 100))
    memory_index(root / "references/memory-index.json",
                 (memory_doc(i, paragraphs) for i in range(n)),
                 '{"widget":[{"doc_id":0,"tf":1}]}', n)
    return "query_index"


def shape_tiny_documents(root: Path, size: int) -> str:
    n = size // len(memory_doc(1_000_000))
    memory_index(root / "references/memory-index.json", (memory_doc(i) for i in range(n)),
                 '{"widget":[{"doc_id":0,"tf":1}]}', n)
    return "query_index"


def shape_tiny_terms(root: Path, size: int) -> str:
    n = size // len('"t1000000":[{"doc_id":0,"tf":1}],')
    postings = "{" + ",".join(f'"t{i}":[{{"doc_id":0,"tf":1}}]' for i in range(n)) + "}"
    memory_index(root / "references/memory-index.json", [memory_doc(0)], postings, 1)
    return "query_index"


def shape_long_postings(root: Path, size: int) -> str:
    docs = 100_000
    per_term = ",".join(f'{{"doc_id":{d},"tf":1}}' for d in range(docs))
    terms = max(1, (size - docs * 80) // len(per_term))
    postings = "{" + ",".join(f'"{WORDS[t % len(WORDS)]}{t}":[{per_term}]'
                              for t in range(terms)) + "}"
    postings = postings.replace('"widget0"', '"widget"')
    memory_index(root / "references/memory-index.json", (memory_doc(i) for i in range(docs)),
                 postings, docs)
    return "query_index"


def code_partition(path: Path, part: int, size: int, empty: int) -> None:
    """Documents of ten passages each (and `empty` empty ones); postings over a vocabulary of
    20,000 terms."""
    docs, postings = [], {}
    written = 0
    i = 0
    while written < size * (0.6 if empty == 0 else 0.97):
        passages = []
        for p in range(10):
            words = [WORDS[(i * 7 + p * 3 + w) % len(WORDS)] for w in range(12)]
            passages.append(f"def f{i}_{p}(x): " + " ".join(words))
        passages += [""] * empty
        doc = json.dumps({"doc_id": i, "path": f"p{part}/m{i}.py", "source_kind": "local-script",
                          "symbol": None, "title": f"m{i}", "length": 120,
                          "snippet": passages[0], "passages": passages, "source_mtime": 0})
        docs.append(doc)
        written += len(doc)
        for t in range(30):
            postings.setdefault(f"term{(i * 31 + t * 677) % 20000}", []).append(i)
        postings.setdefault(WORDS[i % len(WORDS)], []).append(i)
        i += 1
    body = ",".join(f'"{term}":[' + ",".join(f'{{"doc_id":{d},"tf":1}}' for d in ids) + "]"
                    for term, ids in postings.items())
    with open(path, "w") as f:
        f.write('{"artifact_type": "code-index-partition", "code_index_schema_version": "1.0", '
                '"source_kind": "local-script", "project_name": "", "framework": "", '
                f'"built_at": "2026-10-07T12:34:56Z", "source_count": {i}, '
                f'"documents": [{",".join(docs)}], "postings": {{{body}}}, '
                f'"avgdl": 120.0, "N": {i}}}')


def shape_code_partitions(root: Path, size: int, empty: int) -> str:
    count = 30
    code = root / "references/code-index"
    code.mkdir(parents=True, exist_ok=True)
    entries = {}
    for part in range(count):
        code_partition(code / f"p{part}.json", part, size // count, empty)
        entries[f"p{part}"] = {"file": f"p{part}.json", "source_kind": "local-script", "N": 0}
    (code / "manifest.json").write_text(json.dumps({
        "artifact_type": "code-index-manifest", "code_index_schema_version": "1.0",
        "project_name": "", "framework": "", "built_at": "2026-10-07T12:34:56Z",
        "partitions": entries}))
    return "query_code"


TREE_FILE_BYTES = 30 * 2**20


def shape_shadowed(root: Path, size: int, item: str, open_: str = "[", close: str = "]") -> str:
    size = min(size, TREE_FILE_BYTES)
    junk = open_ + ",".join([item] * (size // (len(item) + 1))) + close
    path = root / "references/memory-index.json"
    memory_index(path, [memory_doc(0, '"widget here"')], '{"widget":[{"doc_id":0,"tf":1}]}', 1)
    text = path.read_text()
    path.write_text('{"framework": ' + junk + ", " + text[1:])
    return "query_index"


def shape_repeated_posting_keys(root: Path, size: int) -> str:
    size = min(size, TREE_FILE_BYTES)
    item = '{"doc_id":0,"doc_id":0,"tf":1}'
    postings = '{"widget":[' + ",".join([item] * (size // (len(item) + 1))) + "]}"
    memory_index(root / "references/memory-index.json", [memory_doc(0, '"widget here"')],
                 postings, 1)
    return "query_index"


def shape_repeated_key_paragraphs(root: Path, size: int) -> str:
    size = min(size, TREE_FILE_BYTES)
    item = '"widget ' + "x" * 1000 + '"'
    path = root / "references/memory-index.json"
    memory_index(path, [memory_doc(0, ",".join([item] * (size // (len(item) + 1))))],
                 '{"widget":[{"doc_id":0,"tf":1}]}', 1)
    path.write_text('{"N": 1, ' + path.read_text()[1:])
    return "query_index"


SHAPES = {
    "empty-paragraphs": lambda root, size: shape_paragraphs(root, size, '""'),
    "blank-paragraphs": lambda root, size: shape_paragraphs(root, size, '" "'),
    "long-documents": lambda root, size: shape_paragraphs(root, size, '""', 8_000_000),
    "tiny-documents": shape_tiny_documents,
    "tiny-terms": shape_tiny_terms,
    "long-postings": shape_long_postings,
    "code-partitions": lambda root, size: shape_code_partitions(root, size * 151 // 119, 5000),
    "code-realistic": lambda root, size: shape_code_partitions(root, size * 151 // 119, 0),
    "shadowed-numbers": lambda root, size: shape_shadowed(root, size, "0"),
    "shadowed-arrays": lambda root, size: shape_shadowed(root, size, "[]"),
    "shadowed-objects": lambda root, size: shape_shadowed(root, size, '"a":{}', "{", "}"),
    "shadowed-strings": lambda root, size: shape_shadowed(root, size, '"a"'),
    "repeated-posting-keys": shape_repeated_posting_keys,
    "repeated-key-paragraphs": shape_repeated_key_paragraphs,
}


def index_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in (root / "references").rglob("*.json"))


def measure(binary: str, root: Path, tool: str, calls: int = 3):
    lines = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "memory_shapes", "version": "1"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    proc = subprocess.Popen(["/usr/bin/time", "-v", binary, "--serve-mcp", "recall", "--root",
                             str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdin.write("\n".join(lines) + "\n")
    proc.stdin.flush()
    proc.stdout.readline()
    times, errors = [], []
    for i in range(calls):
        t0 = time.perf_counter()
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                                     "params": {"name": tool,
                                                "arguments": {"query": "widget gear"}}}) + "\n")
        proc.stdin.flush()
        reply = proc.stdout.readline()
        times.append(time.perf_counter() - t0)
        result = json.loads(reply).get("result", {}) if reply else {}
        if not reply or result.get("isError"):
            errors.append((reply or "no reply").strip()[:300])
    proc.stdin.close()
    stderr = proc.stderr.read()
    proc.wait()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr).group(1)) * 1024
    return rss, times, errors


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/agentteams-mcp")
    ap.add_argument("--mib", type=float, default=119)
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--runs", type=int, default=1,
                    help="fresh processes per shape; past 1, the peak is reported as min-max")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    size = int(args.mib * 1024 * 1024)
    print(f"{'shape':18} {'index MiB':>10} {'peak RSS MiB':>13} {'ratio':>6}  call seconds")
    base = Path(tempfile.mkdtemp(prefix="recall-memory-"))
    empty = base / "empty"
    (empty / "references").mkdir(parents=True)
    memory_index(empty / "references/memory-index.json", [], "{}", 0)
    rss, _, _ = measure(binary, empty, "query_index", 1)
    print(f"{'(empty index)':18} {0:>10.1f} {rss / 2**20:>13.1f}")
    for name in args.shape or list(SHAPES):
        root = base / name
        (root / "references").mkdir(parents=True)
        tool = SHAPES[name](root, size)
        total = index_bytes(root)
        runs = [measure(binary, root, tool) for _ in range(max(1, args.runs))]
        rss, times, errors = runs[0]
        if len(runs) == 1:
            print(f"{name:18} {total / 2**20:>10.1f} {rss / 2**20:>13.1f} {rss / total:>6.2f}  "
                  + " ".join(f"{t:.2f}" for t in times), flush=True)
        else:
            low, high = min(r[0] for r in runs), max(r[0] for r in runs)
            print(f"{name:18} {total / 2**20:>10.1f} {low / 2**20:>6.1f}-{high / 2**20:<6.1f} "
                  f"{low / total:.2f}-{high / total:.2f}  runs: "
                  + " ".join(f"{r[0] / 2**20:.1f}" for r in runs), flush=True)
        for e in errors[:1]:
            print(f"  error: {e[:240]}")
        if not args.keep:
            shutil.rmtree(root)
    if args.keep:
        print(f"kept: {base}")
    else:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
