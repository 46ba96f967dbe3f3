#!/usr/bin/env python3
"""Deployment benchmark (issue 17): requests/s and p99 of a trivial `tools/call` through nginx
(plain HTTP listener: TLS is nginx's cost, not the server's) in front of one or three `--http`
replicas, and sealed sessions (`--session-key-file`) against in-memory sessions on one replica,
directly and through nginx. Measured interleaved in one run by bench/http/src/bin/http_load.rs
(keep-alive connections, one session each, calls back to back, every reply checked for status 200
and the fixture's text; a run with any failed reply aborts the benchmark).

Method (docs/PERFORMANCE.md): for each comparison and connection count, rounds alternate the order
A B / B A; the ratio B/A is taken within each round (both runs back to back, so background load
hits them alike); the report gives the min and median of the paired ratios and the median of each
side's requests/s and p99.

Usage: bench/http/deploy_bench.py [--secs 3] [--rounds 6] [--conns 8,64] [--only 1,2,3]
Needs cargo, rustc, nginx (Debian's nginx-light) and openssl.
"""
import argparse, json, os, shutil, socket, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.join(ROOT, "target", "release", "agentteams-mcp-fixtures")
sys.path.insert(0, HERE)
from run import wait_listening  # noqa: E402  (the peers benchmark's, beside this script)


def build(work):
    subprocess.run(["cargo", "build", "--release", "--offline", "--quiet", "-p",
                    "agentteams-mcp-fixtures"], cwd=ROOT, check=True)
    # The load generator is std-only: compiled alone, without the bench crate's registry peers.
    load = os.path.join(work, "http-load")
    subprocess.run(["rustc", "-O", "--edition", "2021", "-o", load,
                    os.path.join(HERE, "src", "bin", "http_load.rs")], check=True)
    return load


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Fleet:
    """Replicas (sealed or not) and optionally nginx in front; `port` is where clients go."""

    def __init__(self, work, name, replicas, sealed, nginx):
        self.procs = []
        ports = []
        for _ in range(replicas):
            port = free_port()
            cmd = [BIN, "--serve-mcp", "conformance", "--http", "--port", str(port)]
            if sealed:
                cmd += ["--session-key-file", os.path.join(work, "session.key")]
            self.procs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL))
            wait_listening(port, self.procs[-1])
            ports.append(port)
        self.port = ports[0]
        if nginx:
            self.port = free_port()
            conf_dir = os.path.join(work, name)
            os.makedirs(conf_dir, exist_ok=True)
            upstream = "".join(f"        server 127.0.0.1:{p};\n" for p in ports)
            user = "user root;" if os.geteuid() == 0 else ""
            conf = f"""worker_processes 1;
pid {conf_dir}/nginx.pid;
error_log {conf_dir}/error.log warn;
daemon off;
{user}
events {{ worker_connections 1024; }}
http {{
    access_log off;
    keepalive_requests 100000000;   # the load generator keeps its connections for the whole run
    client_body_temp_path {conf_dir}/body;
    proxy_temp_path {conf_dir}/proxy;
    upstream replicas {{
{upstream}        keepalive 64;
        keepalive_requests 100000000;
    }}
    server {{
        listen 127.0.0.1:{self.port};
        location = /mcp {{
            proxy_pass http://replicas;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host localhost;
            proxy_buffering off;
        }}
    }}
}}
"""
            path = os.path.join(conf_dir, "nginx.conf")
            with open(path, "w") as f:
                f.write(conf)
            self.procs.append(subprocess.Popen(["nginx", "-c", path, "-p", conf_dir, "-e",
                                                os.path.join(conf_dir, "error.log")]))
            wait_listening(self.port, self.procs[-1])

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait()


def measure(load, fleet, conns, secs):
    out = subprocess.run([load, "--port", str(fleet.port), "--tool", "test_simple_text",
                          "--conns", str(conns), "--secs", str(secs), "--warmup", "0.5"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"http-load failed on port {fleet.port}: {out.stderr.strip()[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["errors"] or result["requests"] == 0:
        raise SystemExit(f"failed replies: {result}")
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--conns", default="8,64")
    ap.add_argument("--only", default="", help="comparisons to run, by number (1,2,3); all by default")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="agentteams-deploy-bench-")
    try:
        old = os.umask(0o077)
        with open(os.path.join(work, "session.key"), "w") as f:
            f.write(os.urandom(32).hex() + "\n")
        os.umask(old)
        load = build(work)
        arms = {
            "direct, 1 replica, in-memory": (1, False, False),
            "direct, 1 replica, sealed": (1, True, False),
            "nginx, 1 replica, in-memory": (1, False, True),
            "nginx, 1 replica, sealed": (1, True, True),
            "nginx, 3 replicas, sealed": (3, True, True),
        }
        fleets = {name: Fleet(work, f"f{i}", *spec) for i, (name, spec) in enumerate(arms.items())}
        comparisons = [
            ("direct, 1 replica, in-memory", "direct, 1 replica, sealed"),
            ("nginx, 1 replica, in-memory", "nginx, 1 replica, sealed"),
            ("nginx, 1 replica, sealed", "nginx, 3 replicas, sealed"),
        ]
        if args.only:
            comparisons = [comparisons[int(i) - 1] for i in args.only.split(",")]
        try:
            for conns in [int(c) for c in args.conns.split(",")]:
                for a, b in comparisons:
                    runs = {a: [], b: []}
                    ratios = []
                    for r in range(args.rounds):
                        order = (a, b) if r % 2 == 0 else (b, a)
                        got = {name: measure(load, fleets[name], conns, args.secs) for name in order}
                        for name in order:
                            runs[name].append(got[name])
                        ratios.append(got[b]["rps"] / got[a]["rps"])
                    med = lambda name, k: statistics.median(x[k] for x in runs[name])
                    print(f"{conns} connections: {b} / {a}: requests/s ratio min {min(ratios):.3f}, "
                          f"median {statistics.median(ratios):.3f} ({args.rounds} paired rounds)")
                    for name in (a, b):
                        print(f"    {name}: {med(name, 'rps'):,.0f} requests/s, p99 "
                              f"{med(name, 'p99_ms'):.2f} ms (medians), "
                              f"{sum(x['requests'] for x in runs[name]):,} replies checked")
                    sys.stdout.flush()
        finally:
            for fleet in fleets.values():
                fleet.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
