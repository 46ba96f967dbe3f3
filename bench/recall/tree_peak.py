#!/usr/bin/env python3
"""Peak resident memory of fresh recall servers on the file of `recall_memory.rs`'s `postings` shape
(`files_parsed_whole_are_refused_past_the_tree_budget_and_served_within_it`): a 24 MiB memory
index with a repeated key in every posting, which the tree path refuses past its budget. Each
server runs as the test runs it: under `ulimit -v` of 96 MiB plus three times the file, three
`query_index` calls sent one at a time, `VmHWM` read from /proc before its input ends.

Prints, per server, `VmHWM` after `initialize` and after each call, and `VmPeak` after
`initialize` and after the first call (the debug binary: 14 MiB after `initialize` means the
stdio server's second thread had not yet allocated, so it had no arena; 144 rather than 148 after
the first call, that it started none during the call either); then how many servers peaked
above the test's limit (2.5 times the file plus 16 MiB). --pairs runs two servers at a time (as
the test runs beside the other tests of its file); the late first allocation, which took one
load's arena before the load thread was kept, comes more often in some sessions than in others
(15 of 80 servers in one, none in the next).

usage: tree_peak.py [--bin target/debug/agentteams-mcp] [--runs 40] [--pairs]
(--pairs: twice --runs servers in all, two at a time.)
The test runs the debug binary (`cargo test` builds it); the release binary peaks lower.
"""
import argparse, json, os, subprocess, sys, tempfile
from pathlib import Path

MIB = 1 << 20


def write_index(root: Path) -> int:
    item = '{"doc_id":0,"doc_id":0,"tf":1}'
    postings = '{"widget": [' + ",".join([item] * (24 * MIB // (len(item) + 1))) + "]}"
    documents = ('[{"doc_id":0,"path":"d0.md","title":"t","length":2,"snippet":"s",'
                 '"paragraphs":["widget here"],"source_mtime":0}]')
    # recall_support::memory_index, byte for byte.
    text = ('{"artifact_type": "memory-index", "memory_index_schema_version": "1.3",\n'
            '            "project_name": "p", "framework": "f", "built_at": '
            '"2026-10-07T12:34:56.123456Z",\n'
            f'            "source_count": 1, "documents": {documents}, "postings": {postings},\n'
            '            "avgdl": 2.0, "N": 1}')
    path = root / "references/memory-index.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return len(text)


def status(pid: int, field: str) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def serve(binary: str, root: Path, nbytes: int, cpu):
    kib = 96 * 1024 + 3 * nbytes // 1024
    lines = ['{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
             '"2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}',
             '{"jsonrpc": "2.0", "method": "notifications/initialized"}']
    lines += ['{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": '
              '"query_index", "arguments": {"query": "widget"}}}' % i for i in (2, 3, 4)]
    pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
    proc = subprocess.Popen(["sh", "-c", 'ulimit -v "$0" && exec "$@"', str(kib), *pin, binary,
                             "--serve-mcp", "recall", "--root", str(root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    hwm, vmpeak = [], []
    for line in lines:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        if '"id"' in line:
            reply = proc.stdout.readline()
            if '"id": 1,' not in line and "TREE_BUDGET" not in reply:
                raise SystemExit(f"not the tree budget's refusal: {reply[:300]}")
            hwm.append(status(proc.pid, "VmHWM") / 1024)
            vmpeak.append(status(proc.pid, "VmPeak") / 1024)
    proc.stdin.close()
    proc.stdout.read()
    proc.wait()
    return hwm, vmpeak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/debug/agentteams-mcp")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--pairs", action="store_true")
    ap.add_argument("--cpu", type=int, help="pin each server to this CPU (taskset)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    # The other server of each pair comes from a second driver process, not a thread of this
    # one: two interpreters contend for the CPU as two test threads' servers do.
    other = subprocess.Popen([sys.executable, __file__, "--bin", binary, "--runs", str(args.runs),
                              "--child"] + (["--cpu", str(args.cpu)] if args.cpu is not None else []), stdout=subprocess.PIPE, text=True) if args.pairs else None
    with tempfile.TemporaryDirectory(prefix="recall-tree-peak-") as tmp:
        root = Path(tmp)
        nbytes = write_index(root)
        limit = (250 * nbytes // 100 + (16 << 20)) / MIB
        runs = [serve(binary, root, nbytes, args.cpu) for _ in range(args.runs)]
    if args.child:
        print(json.dumps(runs))
        return
    if other:
        runs += json.loads(other.communicate()[0])
    for i, (hwm, vmpeak) in enumerate(runs):
        print(f"server {i}: VmHWM MiB " + " ".join(f"{h:.1f}" for h in hwm)
              + f" ({hwm[-1] * MIB / nbytes:.2f}x); VmPeak MiB {vmpeak[0]:.0f} {vmpeak[1]:.0f}")
    peaks = [hwm[-1] for hwm, _ in runs]
    late = sum(vmpeak[0] < 64 for _, vmpeak in runs)
    print(f"file {nbytes / MIB:.1f} MiB, limit {limit:.1f} MiB: {sum(p > limit for p in peaks)} of "
          f"{len(runs)} servers above it; peak {min(peaks):.1f}-{max(peaks):.1f} MiB; "
          f"{late} whose second stdio thread had no arena yet when initialize was answered")


if __name__ == "__main__":
    main()
