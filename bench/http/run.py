#!/usr/bin/env python3
"""Streamable HTTP benchmark: agentteams-mcp against the official Rust SDK (rmcp) and the official
Python SDK, serving the same trivial tool (`test_simple_text`), measured in one run by the same
load generator (bench/http/src/bin/http_load.rs: keep-alive connections, one session each,
tools/call back to back).

Peers: rmcp with its defaults ("rmcp") and with TCP_NODELAY on its sockets ("rmcp-nodelay"; axum
leaves Nagle on by default), and the Python SDK. Reports requests/s and p50/p99 latency at 1, 8
and 64 connections (the median of --rounds runs
each), and each server's resident memory (VmRSS) before and while 1,000 initialized connections
sit idle.

Usage: bench/http/run.py [--secs 5] [--rounds 3] [--idle 1000] [--only agentteams,rmcp,python]
Needs cargo and Python 3 (the Python SDK is installed into a venv, $BENCH_PYENV or
$TMPDIR/agentteams-bench-pyenv, on first use).
"""
import argparse, json, os, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TMP = os.environ.get("TMPDIR", "/tmp")
PYENV = os.environ.get("BENCH_PYENV", os.path.join(TMP, "agentteams-bench-pyenv"))
LOAD = os.path.join(HERE, "target", "release", "http-load")


def sh(*cmd, cwd=None):
    subprocess.run(cmd, cwd=cwd, check=True)


def build():
    sh("cargo", "build", "--release", "--quiet", "-p", "agentteams-mcp-servers", cwd=ROOT)
    sh("cargo", "build", "--release", "--quiet", cwd=HERE)
    if not os.path.exists(os.path.join(PYENV, "bin", "python")):
        sh(sys.executable, "-m", "venv", PYENV)
        sh(os.path.join(PYENV, "bin", "pip"), "install", "--quiet", "mcp==2.3.0", "uvicorn")


def servers():
    return {
        "agentteams": (7431, [os.path.join(ROOT, "target", "release", "agentteams-mcp"),
                              "--serve-mcp", "conformance", "--http", "--port", "7431"]),
        "rmcp": (7432, [os.path.join(HERE, "target", "release", "rmcp-peer"), "7432"]),
        "rmcp-nodelay": (7434, [os.path.join(HERE, "target", "release", "rmcp-peer"), "7434", "--nodelay"]),
        "python": (7433, [os.path.join(PYENV, "bin", "python"), os.path.join(HERE, "python_peer.py"), "7433"]),
    }


def wait_listening(port, proc):
    import socket
    for _ in range(200):
        if proc.poll() is not None:
            raise SystemExit(f"server on port {port} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on port {port}")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def load(port, conns, secs):
    out = subprocess.run([LOAD, "--port", str(port), "--tool", "test_simple_text",
                          "--conns", str(conns), "--secs", str(secs), "--warmup", "1"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def idle_memory(port, pid, n):
    before = rss_kib(pid)
    p = subprocess.Popen([LOAD, "--port", str(port), "--idle", str(n), "--secs", "30"],
                         stdout=subprocess.PIPE, text=True)
    ready = p.stdout.readline()
    time.sleep(1)
    during = rss_kib(pid)
    p.kill()
    p.wait()
    return before, during, ready.strip()


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--secs", type=float, default=5)
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--idle", type=int, default=1000)
    a.add_argument("--only", default="agentteams,rmcp,rmcp-nodelay,python")
    args = a.parse_args()
    build()
    results, memory = {}, {}
    for name in args.only.split(","):
        port, cmd = servers()[name]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_listening(port, proc)
            for conns in (1, 8, 64):
                runs = [load(port, conns, args.secs) for _ in range(args.rounds)]
                med = lambda k: statistics.median(r[k] for r in runs)
                results[(name, conns)] = {k: med(k) for k in ("rps", "p50_ms", "p99_ms")}
                results[(name, conns)]["errors"] = sum(r["errors"] for r in runs)
                print(name, conns, results[(name, conns)], flush=True)
            memory[name] = idle_memory(port, proc.pid, args.idle)
            print(name, "idle", memory[name], flush=True)
        finally:
            proc.kill()
            proc.wait()
    print()
    print("| server | conns | requests/s | p50 ms | p99 ms | errors |")
    print("|---|---|---|---|---|---|")
    for (name, conns), r in results.items():
        print(f"| {name} | {conns} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['errors']} |")
    print()
    print(f"| server | RSS before (MiB) | RSS with {args.idle} idle connections (MiB) |")
    print("|---|---|---|")
    for name, (before, during, ready) in memory.items():
        print(f"| {name} | {before / 1024:.1f} | {during / 1024:.1f} ({ready}) |")
    print()
    for peer in ("rmcp", "rmcp-nodelay", "python"):
        if ("agentteams", 1) in results and (peer, 1) in results:
            ratios = [results[("agentteams", c)]["rps"] / results[(peer, c)]["rps"] for c in (1, 8, 64)]
            print(f"throughput agentteams/{peer} at 1, 8, 64 connections: " + ", ".join(f"{r:.1f}x" for r in ratios))


if __name__ == "__main__":
    main()
