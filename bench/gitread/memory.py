#!/usr/bin/env python3
"""Peak memory of gitread under the memory-exhaustion triggers (SECURITY.md, gitread "Memory").

Builds one fixture repository per trigger, then for each starts a fresh
`agentteams-mcp --serve-mcp gitread --root <repo>` under GNU time and an outer address-space cap
(so a binary without the limit cannot take the machine down), makes the one call, and reports the
reply, the wall time and the peak resident memory of the server and every git it reaped (GNU
time's %M: wait4's ru_maxrss covers reaped descendants).

Triggers:
  rev-regex      git_log {"rev": "HEAD^{/.{32767}{32767}}"}
  loose-ref      refs/heads/main a 64 GiB sparse file, then git_status
  dev-zero-ref   refs/heads/main a link to /dev/zero, then git_status
  packed-refs-1g packed-refs grown to 1 GiB (the largest the repository checks pass), git_status
  packed-refs    packed-refs grown to a 2 GiB sparse file (main packed), then git_status
  blame          git_blame of a committed 300 MB blob of newlines
  xfuncname      diff.x.xfuncname=a{32767}{32767} with `* diff=x`, then git_show HEAD
  big-pack       a pack larger than the limit (random blob), then git_log and git_show HEAD
                 (served: pack windows are sized to the limit)

Usage:
  nice -n 19 python3 bench/gitread/memory.py [--binary target/release/agentteams-mcp]
      [--git /usr/bin/git] [--outer-cap 8G] [--only NAME ...] [-- SERVER-ARGS...]
e.g. `-- --git-memory-limit 256M`. Needs /usr/bin/time (Debian package `time`) and prlimit.
"""
import argparse, json, os, random, shutil, subprocess, tempfile, time

ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
       "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
       "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com"}


def git(g, repo, *args, stdin=None):
    subprocess.run([g, "-C", repo, *args], check=True, env=ENV, input=stdin,
                   stdout=subprocess.DEVNULL)


def base(g, repo):
    subprocess.run([g, "init", "-q", "-b", "main", repo], check=True, env=ENV)
    with open(os.path.join(repo, "a.txt"), "w") as f:
        f.write("one\n")
    git(g, repo, "add", "a.txt")
    git(g, repo, "commit", "-q", "-m", "first")
    with open(os.path.join(repo, "a.txt"), "a") as f:
        f.write("two\n")
    git(g, repo, "commit", "-q", "-am", "second")


def fast_import_blob(g, repo, name, size, chunk):
    """Commits `name` holding `size` bytes made of `chunk()` pieces, streamed into fast-import."""
    proc = subprocess.Popen([g, "-C", repo, "-c", "fastimport.unpackLimit=0", "fast-import", "--quiet"], stdin=subprocess.PIPE,
                            env=ENV)
    msg = b"big\n"
    proc.stdin.write(b"commit refs/heads/main\ncommitter A <a@example.com> 1700000000 +0000\n"
                     b"data %d\n%sfrom refs/heads/main^0\nM 100644 inline %s\ndata %d\n"
                     % (len(msg), msg, name.encode(), size))
    left = size
    while left:
        piece = chunk(min(left, 1 << 20))
        proc.stdin.write(piece)
        left -= len(piece)
    proc.stdin.write(b"\n")
    proc.stdin.close()
    assert proc.wait() == 0
    git(g, repo, "reset", "-q", "--hard", "main")


def build(name, g, repo):
    base(g, repo)
    if name == "rev-regex":
        return "git_log", {"rev": "HEAD^{/.{32767}{32767}}"}
    if name == "loose-ref":
        with open(os.path.join(repo, ".git/refs/heads/main"), "r+b") as f:
            f.truncate(64 << 30)
        return "git_status", {}
    if name == "dev-zero-ref":
        main = os.path.join(repo, ".git/refs/heads/main")
        os.remove(main)
        os.symlink("/dev/zero", main)
        return "git_status", {}
    if name == "packed-refs-1g":
        git(g, repo, "pack-refs", "--all")
        with open(os.path.join(repo, ".git/packed-refs"), "r+b") as f:
            f.truncate(1 << 30)
        return "git_status", {}
    if name == "packed-refs":
        git(g, repo, "pack-refs", "--all")
        with open(os.path.join(repo, ".git/packed-refs"), "r+b") as f:
            f.truncate(2 << 30)
        return "git_status", {}
    if name == "blame":
        fast_import_blob(g, repo, "big.txt", 300_000_000, lambda n: b"\n" * n)
        return "git_blame", {"rev": "HEAD", "path": "big.txt"}
    if name == "xfuncname":
        with open(os.path.join(repo, ".gitattributes"), "w") as f:
            f.write("* diff=x\n")
        git(g, repo, "add", ".gitattributes")
        with open(os.path.join(repo, "a.txt"), "a") as f:
            f.write("three\n")
        git(g, repo, "commit", "-q", "-am", "third")
        git(g, repo, "config", "diff.x.xfuncname", "a{32767}{32767}")
        return "git_show", {"rev": "HEAD"}
    if name == "big-pack":
        rng = random.Random(1)
        fast_import_blob(g, repo, "random.bin", 300 << 20, rng.randbytes)
        with open(os.path.join(repo, "a.txt"), "a") as f:
            f.write("three\n")
        git(g, repo, "commit", "-q", "-am", "third")
        return "git_log", {"n": 3}
    raise SystemExit(f"unknown trigger {name}")


def measure(binary, server_args, repo, git_path, outer_cap, tool, args, tmp):
    out = os.path.join(tmp, "time")
    proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", out, "prlimit", f"--as={outer_cap}",
                             "--", binary, "--serve-mcp", "gitread", "--root", repo, *server_args],
                            env=dict(os.environ, AGENTTEAMS_GIT=git_path),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    for line in lines:
        proc.stdin.write((json.dumps(line) + "\n").encode())
    proc.stdin.flush()
    proc.stdout.readline()
    t0 = time.perf_counter()
    proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                  "params": {"name": tool, "arguments": args}}) + "\n").encode())
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    seconds = time.perf_counter() - t0
    proc.stdin.close()
    proc.wait(timeout=60)
    result = reply.get("result", {})
    text = result.get("content", [{}])[0].get("text", "")
    status = "error" if result.get("isError") else "ok"
    peak_mib = int(open(out).read().split()[-1]) / 1024
    return status, text, seconds, peak_mib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/agentteams-mcp")
    ap.add_argument("--git", default=shutil.which("git") or "/usr/bin/git")
    ap.add_argument("--outer-cap", default="8G")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("server_args", nargs="*")
    a = ap.parse_args()
    caps = {"G": 30, "M": 20}
    outer = int(a.outer_cap[:-1]) << caps[a.outer_cap[-1]]
    names = a.only or ["rev-regex", "loose-ref", "dev-zero-ref", "packed-refs", "packed-refs-1g",
                       "blame", "xfuncname", "big-pack"]
    binary = os.path.abspath(a.binary)
    print(f"{binary} {' '.join(a.server_args)}, git {a.git}, outer cap {a.outer_cap}")
    print(f"{'trigger':<12} {'reply':<6} {'seconds':>7} {'peak MiB':>9}  text")
    for name in names:
        tmp = tempfile.mkdtemp(prefix="gitread-memory-")
        try:
            repo = os.path.realpath(os.path.join(tmp, "repo"))
            tool, args = build(name, a.git, repo)
            time.sleep(2.5)  # past the config cache's racy window, as in a real checkout
            status, text, seconds, peak = measure(binary, a.server_args, repo, a.git, outer,
                                                  tool, args, tmp)
            print(f"{name:<12} {status:<6} {seconds:>7.2f} {peak:>9.0f}  "
                  f"{' '.join(text.split())[:150]}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
