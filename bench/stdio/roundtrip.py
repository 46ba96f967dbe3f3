#!/usr/bin/env python3
"""Startup latency and round trips per second of an MCP stdio server, driven over a pipe.

Measures, in one run:
  1. time from process start to the initialize reply (median and p90 over --starts runs);
  2. round trips per second for one tools/call repeated --calls times on one process
     (each request is written only after the previous reply arrived).

Usage:
  bench/stdio/roundtrip.py --tool NAME [--args JSON] [--starts 50] [--calls 2000] -- CMD ARGS...
Example (the conformance fixture's trivial tool):
  bench/stdio/roundtrip.py --tool test_simple_text -- target/release/agentteams-mcp --serve-mcp conformance
"""
import argparse, json, statistics, subprocess, sys, time


def start(cmd):
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)


def ask(proc, msg):
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    line = proc.stdout.readline()
    if not line:
        raise SystemExit("server closed stdout")
    return json.loads(line)


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tool", required=True)
    p.add_argument("--args", default="{}")
    p.add_argument("--starts", type=int, default=50)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        p.error("give the server command after --")

    startup = []
    for _ in range(a.starts):
        t0 = time.perf_counter()
        proc = start(cmd)
        reply = ask(proc, INIT)
        startup.append(time.perf_counter() - t0)
        assert "result" in reply, reply
        proc.stdin.close()
        proc.wait()

    proc = start(cmd)
    ask(proc, INIT)
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": a.tool, "arguments": json.loads(a.args)}}
    for _ in range(50):  # warm-up
        ask(proc, call)
    per_call = []
    t_all = time.perf_counter()
    for i in range(a.calls):
        call["id"] = i + 2
        t0 = time.perf_counter()
        reply = ask(proc, call)
        per_call.append(time.perf_counter() - t0)
        assert reply.get("id") == i + 2 and "result" in reply, reply
    total = time.perf_counter() - t_all
    proc.stdin.close()
    proc.wait()

    per_call.sort()
    print(f"startup to initialize reply: median {statistics.median(startup)*1e3:.2f} ms, "
          f"p90 {sorted(startup)[int(len(startup)*0.9)]*1e3:.2f} ms over {a.starts} starts")
    print(f"tools/call {a.tool}: {a.calls/total:.0f} round trips/s, "
          f"p50 {per_call[len(per_call)//2]*1e6:.0f} us, p99 {per_call[int(len(per_call)*0.99)]*1e6:.0f} us "
          f"over {a.calls} calls")


if __name__ == "__main__":
    main()
