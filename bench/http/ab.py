#!/usr/bin/env python3
"""Before/after benchmark of two builds of agentteams-mcp-fixtures (the product's HTTP stack serving the
conformance fixture) over Streamable HTTP: requests/s and p99
of the conformance fixture's `test_simple_text` (legacy sessions, JSON replies), measured by
bench/http/src/bin/http_load.rs (keep-alive connections, one session each, every reply checked;
any failed reply aborts). Rounds alternate A B / B A (bench/ab.py); the server is pinned to CPU 0
and the load generator to CPU 1 (taskset); the report gives each round and the min and median of
the paired ratios B/A.

Usage: bench/http/ab.py BASE_BIN BRANCH_BIN HTTP_LOAD_BIN [--rounds 6] [--conns 8] [--secs 3]
(build the load generator alone: rustc -O bench/http/src/bin/http_load.rs -o http-load).
"""
import argparse, json, os, socket, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ab import alternate, paired, report  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("base")
parser.add_argument("branch")
parser.add_argument("load")
parser.add_argument("--rounds", type=int, default=6)
parser.add_argument("--conns", type=int, default=8)
parser.add_argument("--secs", default="3")
args = parser.parse_args()
bins = {"base": args.base, "branch": args.branch}


def run(name, port):
    server = subprocess.Popen(["taskset", "-c", "0", bins[name], "--serve-mcp", "conformance",
                               "--http", "--port", str(port)], stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    out = subprocess.run(["taskset", "-c", "1", args.load, "--port", str(port), "--tool",
                          "test_simple_text", "--conns", str(args.conns), "--secs", args.secs,
                          "--warmup", "1"], capture_output=True, text=True, check=True).stdout
    server.terminate()
    server.wait()
    result = json.loads(out.strip().splitlines()[-1])
    assert result["errors"] == 0, result
    return result


def show(i, order, res):
    print(f"round {i + 1} {'/'.join(order)}: base {res['base']['rps']} rps p99 "
          f"{res['base']['p99_ms']} ms, branch {res['branch']['rps']} rps p99 "
          f"{res['branch']['p99_ms']} ms, ratio {res['branch']['rps'] / res['base']['rps']:.3f}",
          flush=True)


results = alternate(args.rounds, [("base", lambda i: run("base", 7600 + 2 * i)),
                                  ("branch", lambda i: run("branch", 7601 + 2 * i))], show)
print(report(f"conns {args.conns}: branch/base rps",
             paired(results["base"], results["branch"], key=lambda r: r["rps"])))
