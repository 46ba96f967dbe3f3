#!/usr/bin/env python3
"""Streamable HTTP benchmark: agentteams-mcp against the official Rust SDK (rmcp 3.1.4), like for
like, interleaved, every reply checked.

Two wire modes, each side in the same one:
  stateless: `agentteams-mcp --http --stateless` against rmcp's stateless mode with plain JSON
             replies (`rmcp-peer --stateless`); the load sends no initialize and no session id.
  sessions:  both servers' default sessions (each connection initializes its own); agentteams-mcp
             answers a call that emits no notification with plain JSON, rmcp always with an SSE
             stream (its only reply form in session mode).
Both set TCP_NODELAY on accepted sockets. One load generator (bench/http/src/bin/http_load.rs:
keep-alive connections, a fresh request id per call, a reply counts only when it is the result for
that id with the fixture's text) drives both. For each mode, both servers are started once; each
round runs every connection count on A then B (B then A on odd rounds); the ratio
agentteams/rmcp is taken within the round, and its min and median over the rounds are reported.

Memory: each server's VmRSS from a freshly started process once it listens, then with --idle
connections that each initialized a session held open (a fresh process per server).

Usage: bench/http/run.py [--secs 3] [--rounds 6] [--conns 1,8,64] [--idle 1000]
                         [--modes stateless,sessions]
"""
import argparse, json, os, statistics, subprocess, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RELEASE = os.path.join(HERE, "target", "release")
LOAD = os.path.join(RELEASE, "http-load")
OURS = os.path.join(ROOT, "target", "release", "agentteams-mcp-fixtures")


def build():
    subprocess.run(["cargo", "build", "--release", "--quiet", "--offline", "-p",
                    "agentteams-mcp-fixtures"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=HERE, check=True)


def command(name, mode, port):
    stateless = ["--stateless"] if mode == "stateless" else []
    if name == "agentteams":
        return [OURS, "--serve-mcp", "conformance", "--http", "--port", str(port)] + stateless
    return [os.path.join(RELEASE, "rmcp-peer"), str(port)] + stateless


def start(name, mode, port):
    proc = subprocess.Popen(command(name, mode, port), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    import socket
    for _ in range(200):
        if proc.poll() is not None:
            raise SystemExit(f"{name} on port {port} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on port {port}")


def stop(proc):
    proc.kill()
    proc.wait()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def load(port, conns, secs, stateless):
    cmd = [LOAD, "--port", str(port), "--tool", "test_simple_text", "--conns", str(conns),
           "--secs", str(secs), "--warmup", "0.5"] + (["--stateless"] if stateless else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def idle_memory(name, port, n):
    proc = start(name, "sessions", port)
    try:
        time.sleep(0.5)
        fresh = rss_kib(proc.pid)
        holder = subprocess.Popen([LOAD, "--port", str(port), "--idle", str(n), "--secs", "30"],
                                  stdout=subprocess.PIPE, text=True)
        ready = holder.stdout.readline().strip()
        time.sleep(1)
        during = rss_kib(proc.pid)
        holder.kill()
        holder.wait()
    finally:
        stop(proc)
    return fresh, during, ready


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--secs", type=float, default=3)
    a.add_argument("--rounds", type=int, default=6)
    a.add_argument("--conns", default="1,8,64")
    a.add_argument("--idle", type=int, default=1000)
    a.add_argument("--modes", default="stateless,sessions")
    args = a.parse_args()
    conns_list = [int(c) for c in args.conns.split(",")]
    build()
    with open("/proc/loadavg") as f:
        print("load average at start:", " ".join(f.read().split()[:3]), flush=True)
    names = ("agentteams", "rmcp")
    rows = []
    for mode in args.modes.split(","):
        ports = {"agentteams": 7451, "rmcp": 7452}
        procs = {n: start(n, mode, ports[n]) for n in names}
        runs = {(n, c): [] for n in names for c in conns_list}
        try:
            for r in range(args.rounds):
                for c in conns_list:
                    for n in (names if r % 2 == 0 else names[::-1]):
                        result = load(ports[n], c, args.secs, mode == "stateless")
                        runs[(n, c)].append(result)
                        print(mode, "round", r, n, json.dumps(result), flush=True)
        finally:
            for p in procs.values():
                stop(p)
        for c in conns_list:
            ours, theirs = runs[("agentteams", c)], runs[("rmcp", c)]
            ratios = [o["rps"] / t["rps"] for o, t in zip(ours, theirs)]
            med = lambda rs, k: statistics.median(x[k] for x in rs)
            rows.append((mode, c, min(ratios), statistics.median(ratios),
                         med(ours, "rps"), med(ours, "p99_ms"), med(theirs, "rps"),
                         med(theirs, "p99_ms"),
                         sum(x["errors"] for x in ours + theirs),
                         sum(x["requests"] for x in ours + theirs)))
    with open("/proc/loadavg") as f:
        print("load average at end:", " ".join(f.read().split()[:3]))
    print()
    print(f"{args.rounds} interleaved rounds of {args.secs:g} s per connection count")
    print("| mode | connections | agentteams / rmcp, min | median | agentteams requests/s, p99 ms "
          "| rmcp requests/s, p99 ms | bad replies / replies |")
    print("|---|---|---|---|---|---|---|")
    for mode, c, lo, mid, o_rps, o_p99, t_rps, t_p99, bad, total in rows:
        print(f"| {mode} | {c} | {lo:.2f}x | {mid:.2f}x | {o_rps:,.0f}, {o_p99:.2f} "
              f"| {t_rps:,.0f}, {t_p99:.2f} | {bad} / {total:,} |")
    if args.idle:
        print()
        print(f"| server | RSS fresh (MiB) | RSS with {args.idle} idle sessions (MiB) |")
        print("|---|---|---|")
        for i, n in enumerate(names):
            fresh, during, ready = idle_memory(n, 7461 + i, args.idle)
            print(f"| {n} | {fresh / 1024:.1f} | {during / 1024:.1f} ({ready}) |")


if __name__ == "__main__":
    main()
