#!/usr/bin/env python3
"""Per-call latency of gitread (git_log n=20, git_status) against the bare git process, in one run.

Builds a repository with --commits commits (one fast-import), starts
`agentteams-mcp --serve-mcp gitread --root <repo>` once, and then, interleaved call by call:
  server    one tools/call over stdio, from writing the request to reading the reply;
  bare      the very git command the server runs (argv and environment recorded from the server
            through a wrapper git at start), spawned directly from this script;
  reference the reference implementation's process shape: two rev-parse, one config, the command
            (four processes per call), spawned the same way.
Reports the median and p90 of each, and the ratio server/bare of the medians.
--gap-ms N waits N ms after each server call before the bare one, as between an agent's calls:
work the server does after replying (starting its next spare git helper) then does not slow the
bare git measured right after it on a machine with few cores.

Usage:
  nice -n 19 python3 bench/gitread/latency.py [--binary target/release/agentteams-mcp]
      [--git /usr/bin/git] [--commits 3000] [--calls 300] [--gap-ms 0] [--loose 0]

--loose N adds N loose objects (spread over the 256 fan-out folders, as in a repository that has
not been repacked lately), which is what the containment check stats on every call.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

TOOLS = {"git_log": {"n": 20}, "git_status": {}}

# The reference's global options (REFERENCE-BEHAVIOUR.md §4.3), for its four-process shape.
REFERENCE_OVERRIDES = [
    "core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat", "diff.external=",
    "core.untrackedCache=false", "log.showSignature=false", "protocol.allow=never",
    "status.submoduleSummary=false", "protocol.file.allow=never", "protocol.git.allow=never",
    "protocol.ssh.allow=never", "protocol.http.allow=never", "protocol.https.allow=never",
    "protocol.ext.allow=never", "log.mailmap=false", "mailmap.file=", "mailmap.blob=",
]
REFERENCE_ENV = {"LC_ALL": "C", "LANG": "C", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
                 "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_LITERAL_PATHSPECS": "1"}


class Server:
    """The binary over stdio, with a buffered reader (readline() on an unbuffered pipe costs one
    read(2) per byte)."""

    def __init__(self, binary, root, git):
        self.proc = subprocess.Popen([binary, "--serve-mcp", "gitread", "--root", root],
                                     env=dict(os.environ, AGENTTEAMS_GIT=git),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "1"}})
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def ask(self, method, params):
        self.next_id += 1
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                           "params": params}) + "\n").encode())
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if "result" not in reply or reply["result"].get("isError"):
            raise SystemExit(f"error reply: {reply}")
        return reply["result"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def captured_commands(binary, root, git, tmp):
    """The exact argv and environment the server gives git for each tool, recorded by a wrapper."""
    wrapper = os.path.join(tmp, "capture-git")
    with open(wrapper, "w") as f:
        f.write(f"""#!/bin/sh
case " $* " in *" config "*|*" --version "*) exec '{git}' "$@" ;; esac
env -0 > '{tmp}/env'; printf '%s\\0' "$@" > '{tmp}/argv'
exec '{git}' "$@"
""")
    os.chmod(wrapper, 0o755)
    server = Server(binary, root, wrapper)
    commands = {}
    for tool, args in TOOLS.items():
        server.ask("tools/call", {"name": tool, "arguments": args})
        argv = [git] + [a for a in open(f"{tmp}/argv").read().split("\0") if a]
        env = dict(kv.split("=", 1) for kv in open(f"{tmp}/env").read().split("\0") if "=" in kv)
        for shell_var in ("PWD", "SHLVL", "_"):
            env.pop(shell_var, None)
        env["PATH"] = os.path.dirname(git) + ":/usr/bin:/bin"
        commands[tool] = (argv, env)
    server.close()
    return commands


def build_repo(git, path, commits, loose):
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    subprocess.run([git, "init", "-q", "-b", "main", path], check=True, env=env)
    lines = []
    for i in range(commits):
        body = f"file {i % 50} revision {i}\n" * 20
        msg = f"commit {i}: change file {i % 50}\n"
        lines.append(f"commit refs/heads/main\ncommitter Bench <b@example.com> {1700000000 + i} +0000\n"
                     f"data {len(msg.encode())}\n{msg}")
        lines.append(f"M 100644 inline src/f{i % 50}.txt\ndata {len(body.encode())}\n{body}\n")
    subprocess.run([git, "-C", path, "fast-import", "--quiet"], input="".join(lines).encode(),
                   check=True, env=env)
    subprocess.run([git, "-C", path, "reset", "-q", "--hard", "main"], check=True, env=env)
    with open(os.path.join(path, "untracked.txt"), "w") as f:
        f.write("new\n")
    if loose:
        # hash-object -w writes each input file as a loose object (fast-import would pack them).
        inputs = os.path.join(os.path.dirname(path), "loose-inputs")
        os.makedirs(inputs)
        names = []
        for i in range(loose):
            names.append(os.path.join(inputs, str(i)))
            with open(names[-1], "w") as f:
                f.write(f"loose object {i}\n")
        subprocess.run([git, "-C", path, "hash-object", "-w", "--no-filters", "--stdin-paths"],
                       input="\n".join(names).encode(), check=True, env=env,
                       stdout=subprocess.DEVNULL)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/agentteams-mcp")
    ap.add_argument("--git", default=shutil.which("git") or "/usr/bin/git")
    ap.add_argument("--commits", type=int, default=3000)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--loose", type=int, default=0)
    ap.add_argument("--gap-ms", type=float, default=0)
    a = ap.parse_args()
    git = os.path.abspath(a.git)
    tmp = tempfile.mkdtemp(prefix="gitread-bench-")
    root = os.path.realpath(os.path.join(tmp, "repo"))
    try:
        build_repo(git, root, a.commits, a.loose)
        # Let the config files age past the pre-flight's racy window (2 s), as in any real checkout.
        time.sleep(3)
        commands = captured_commands(a.binary, root, git, tmp)
        server = Server(a.binary, root, git)
        ref_prefix = [git, "-C", root, f"--work-tree={root}", "--no-pager", "--no-replace-objects",
                      "--no-optional-locks"] + [x for o in REFERENCE_OVERRIDES for x in ("-c", o)]
        renv = dict(REFERENCE_ENV, PATH=os.environ.get("PATH", "/usr/bin:/bin"),
                    GIT_CEILING_DIRECTORIES=os.path.dirname(root))

        def run(argv, env_):
            subprocess.run(argv, env=env_, cwd=root, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        print(f"git {subprocess.run([git, '--version'], capture_output=True, text=True).stdout.split()[-1]}, "
              f"{a.commits} commits, {a.loose} loose objects, {a.calls} calls each, interleaved, gap {a.gap_ms:g} ms")
        print(f"{'tool':<11} {'server ms':>17} {'bare git ms':>17} {'reference-shape ms':>19} {'server/bare':>11}")
        for tool, args in TOOLS.items():
            argv, env_ = commands[tool]
            sub = argv[argv.index(f"--work-tree={root}") + 1:]
            while sub and sub[0] == "-c":
                sub = sub[2:]
            samples = {"server": [], "bare": [], "reference": []}
            for i in range(a.calls + 20):
                t0 = time.perf_counter()
                server.ask("tools/call", {"name": tool, "arguments": args})
                t1 = time.perf_counter()
                server_s = t1 - t0
                if a.gap_ms:
                    time.sleep(a.gap_ms / 1000)
                    t1 = time.perf_counter()
                run(argv, env_)
                t2 = time.perf_counter()
                run(ref_prefix + ["rev-parse", "--absolute-git-dir"], renv)
                run(ref_prefix + ["rev-parse", "--path-format=absolute", "--git-common-dir"], renv)
                run(ref_prefix + ["config", "--includes", "--name-only", "--get-regexp", r"^filter\."], renv)
                run(ref_prefix + sub, renv)
                t3 = time.perf_counter()
                if i >= 20:  # warm-up
                    samples["server"].append(server_s * 1000)
                    samples["bare"].append((t2 - t1) * 1000)
                    samples["reference"].append((t3 - t2) * 1000)
            med = {k: statistics.median(v) for k, v in samples.items()}
            p90 = {k: percentile(v, 0.9) for k, v in samples.items()}
            print(f"{tool:<11} {med['server']:>8.2f} (p90 {p90['server']:5.2f}) {med['bare']:>8.2f} (p90 {p90['bare']:5.2f})"
                  f" {med['reference']:>9.2f} (p90 {p90['reference']:5.2f}) {med['server'] / med['bare']:>10.2f}x")
        server.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
