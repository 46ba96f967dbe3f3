#!/usr/bin/env python3
"""Before/after benchmark of the HTTP client's keep-alive: sequential tool calls from two builds'
clients against one server (--server, a build of agentteams-mcp-fixtures, by default the checkout's
release build, serving the conformance fixture over Streamable HTTP, pinned to CPU 0; every client
pinned to CPU 1).

Two measures per round, each run for both builds in the same round, order alternating A B / B A:
- library: `calls` (calls.rs beside this script, built against each build's library) makes
  --calls sequential `tools/call`s of `test_simple_text` in one legacy session; calls/s.
- command: --invocations runs of `agentteams-mcp client --url URL call test_simple_text` (each a
  whole client: era probe, the call, close; default options), every output checked; ms per run.
Prints every round, then the min and median of the paired ratios after/before (above 1: after
is faster).

Usage: client_ab.py BASE_BIN BRANCH_BIN BASE_CALLS BRANCH_CALLS [--rounds 8] [--calls 2000]
       [--invocations 100] [--no-pin] [--server FIXTURES_BIN]
(--no-pin: no taskset; on a machine busy with other work, a pinned call waits for its one CPU at
every hand-off between client and server, and that wait is what gets measured.)
"""
import argparse, json, os, re, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from ab import alternate, paired, report  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("base")
parser.add_argument("branch")
parser.add_argument("base_calls")
parser.add_argument("branch_calls")
parser.add_argument("--rounds", type=int, default=8)
parser.add_argument("--calls", type=int, default=2000)
parser.add_argument("--invocations", type=int, default=100)
parser.add_argument("--no-pin", action="store_true")
parser.add_argument("--server", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "..", "..", "..", "target", "release", "agentteams-mcp-fixtures"))
args = parser.parse_args()


def pinned(cpu, argv):
    return argv if args.no_pin else ["taskset", "-c", str(cpu)] + argv

EXPECTED = "This is a simple text response for testing."

server = subprocess.Popen(pinned(0, [args.server, "--serve-mcp", "conformance", "--http", "--port", "0"]),
                          stderr=subprocess.PIPE, text=True)
line = server.stderr.readline()
url = re.search(r"http://127\.0\.0\.1:\d+/mcp", line).group(0)


def library(which):
    out = subprocess.run(pinned(1, [getattr(args, which + "_calls"), url, "--calls", str(args.calls)]),
                         capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["calls"] == args.calls, result
    return args.calls / result["secs"]


def command(which):
    binary = getattr(args, which)
    start = time.perf_counter()
    for _ in range(args.invocations):
        out = subprocess.run(pinned(1, [binary, "client", "--url", url, "call", "test_simple_text"]),
                             capture_output=True, text=True, check=True).stdout
        assert out.strip() == EXPECTED, out
    return (time.perf_counter() - start) * 1000 / args.invocations


def show(i, order, m):
    print(f"round {i + 1} {'/'.join(order)}: library base {m['base library']:.0f} calls/s, branch "
          f"{m['branch library']:.0f} calls/s; command base {m['base command']:.2f} ms, branch "
          f"{m['branch command']:.2f} ms", flush=True)


try:
    runs = [(f"{which} {what}", lambda i, f=f, which=which: f(which))
            for what, f in (("library", library), ("command", command))
            for which in ("base", "branch")]
    m = alternate(args.rounds, runs, show)
finally:
    server.terminate()
    server.wait()
# Speed: calls/s for the library, the inverse of ms per run for the command.
print(report("library: after/before speed", paired(m["base library"], m["branch library"])))
print(report("command: after/before speed", paired(m["branch command"], m["base command"])))
