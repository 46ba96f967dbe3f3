#!/usr/bin/env python3
"""Per-call latency of gitread's tools against the bare git process, in one run.

Builds a repository with --commits commits (one fast-import; tags every 250 commits and a few
branches), starts `agentteams-mcp --serve-mcp gitread --root <repo>` once, and then, for each case
in CASES, interleaved call by call:
  server    one tools/call over stdio, from writing the request to reading the reply;
  bare      the very git commands the server runs for that call (argv and environment recorded
            from the server through a wrapper git at start; usually one), spawned directly from
            this script;
  reference the reference implementation's process shape: two rev-parse, one config, the command
            (four processes per call), spawned the same way (for the tools the reference lacks,
            the shape it would have).
Reports the median and p90 of each, the ratio server/bare of the medians, the median of the paired
ratios (server/bare within each round, which cancels load that hits one round) and the ratio of
the minimums. A case whose tool or argument tools/list does not declare is skipped with a note, so
the script runs against any build; --cases picks cases by name.
--gap-ms N waits N ms after each server call before the bare one, as between an agent's calls:
work the server does after replying (starting its next spare git helper) then does not slow the
bare git measured right after it on a machine with few cores.

Usage:
  nice -n 19 python3 bench/gitread/latency.py [--binary target/release/agentteams-mcp]
      [--git /usr/bin/git] [--commits 3000] [--calls 300] [--gap-ms 0] [--loose 0]
      [--cases git_log,git_status,git_file,git_refs,git_grep,git_log_filters,git_show_stat]
      [--show-commands]

--loose N adds N loose objects (spread over the 256 fan-out folders, as in a repository that has
not been repacked lately), which is what the containment check stats on every call.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_stdio import StdioServer  # noqa: E402

# (case, tool, arguments): the two calls measured before, then the new tools and options.
CASES = [
    ("git_log", "git_log", {"n": 20}),
    ("git_status", "git_status", {}),
    ("git_file", "git_file", {"path": "src/f7.txt"}),
    ("git_refs", "git_refs", {"kind": "all"}),
    ("git_grep", "git_grep", {"pattern": "file 7 revision"}),
    ("git_log_filters", "git_log", {"n": 20, "author": "Bench", "since": "2023-11-14", "grep": "file 7"}),
    ("git_show_stat", "git_show", {"rev": "HEAD", "stat": True}),
]

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


def start_server(binary, root, git):
    return StdioServer([binary, "--serve-mcp", "gitread", "--root", root],
                       env=dict(os.environ, AGENTTEAMS_GIT=git))


def ask(server, tool, args):
    call = server.call(tool, args)
    if call.is_error:
        raise SystemExit(f"{tool} {args}: error reply: {call.text}")
    return call


def captured_commands(binary, root, git, tmp, cases):
    """The exact argv and environment the server gives git for each case, recorded by a wrapper:
    every git the call runs, in order (the config pre-flight and version probe excepted)."""
    wrapper = os.path.join(tmp, "capture-git")
    calls = os.path.join(tmp, "calls")
    os.makedirs(calls)
    with open(wrapper, "w") as f:
        f.write(f"""#!/bin/sh
case " $* " in *" config "*|*" --version "*) exec '{git}' "$@" ;; esac
rec='{calls}/'$(date +%s%N)-$$
env -0 > "$rec.env"; printf '%s\\0' "$@" > "$rec.argv"
exec '{git}' "$@"
""")
    os.chmod(wrapper, 0o755)
    server = start_server(binary, root, wrapper)
    commands = {}
    for case, tool, args in cases:
        for name in os.listdir(calls):
            os.unlink(os.path.join(calls, name))
        ask(server, tool, args)
        commands[case] = []
        for rec in sorted(n[:-5] for n in os.listdir(calls) if n.endswith(".argv")):
            argv = [git] + [a for a in open(f"{calls}/{rec}.argv").read().split("\0") if a]
            env = dict(kv.split("=", 1) for kv in open(f"{calls}/{rec}.env").read().split("\0") if "=" in kv)
            for shell_var in ("PWD", "SHLVL", "_"):
                env.pop(shell_var, None)
            env["PATH"] = os.path.dirname(git) + ":/usr/bin:/bin"
            commands[case].append((argv, env))
        if not commands[case]:
            raise SystemExit(f"{case}: no git command recorded")
    server.close()
    return commands


def subcommand(argv):
    """The git subcommand and its arguments: argv without git and its global options."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in ("-c", "-C") else 1
    return argv[i:]


def available(binary, root, git):
    """The cases this build serves, and a note for each it does not."""
    server = start_server(binary, root, git)
    cases, notes = [], []
    for case, tool, args in CASES:
        missing = server.missing(tool, *args)
        if missing:
            notes.append(f"{case}: skipped, {missing}")
        else:
            cases.append((case, tool, args))
    server.close()
    return cases, notes


def build_repo(git, path, commits, loose):
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    subprocess.run([git, "init", "-q", "-b", "main", path], check=True, env=env)
    lines = []
    for i in range(commits):
        body = f"file {i % 50} revision {i}\n" * 20
        msg = f"commit {i}: change file {i % 50}\n"
        lines.append(f"commit refs/heads/main\nmark :{i + 1}\n"
                     f"committer Bench <b@example.com> {1700000000 + i} +0000\n"
                     f"data {len(msg.encode())}\n{msg}")
        lines.append(f"M 100644 inline src/f{i % 50}.txt\ndata {len(body.encode())}\n{body}\n")
    # Tags every 250 commits and a branch every 1000, for git_refs.
    for i in range(249, commits, 250):
        lines.append(f"reset refs/tags/v{i // 250}\nfrom :{i + 1}\n\n")
    for i in range(999, commits, 1000):
        lines.append(f"reset refs/heads/topic-{i // 1000}\nfrom :{i + 1}\n\n")
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
    ap.add_argument("--show-commands", action="store_true",
                    help="print the git commands recorded for each case (without global options)")
    ap.add_argument("--cases", help="comma-separated case names (default: all): "
                    + ",".join(c[0] for c in CASES))
    a = ap.parse_args()
    git = os.path.abspath(a.git)
    wanted = a.cases.split(",") if a.cases else [c[0] for c in CASES]
    unknown = set(wanted) - {c[0] for c in CASES}
    if unknown:
        raise SystemExit(f"unknown cases: {sorted(unknown)}")
    tmp = tempfile.mkdtemp(prefix="gitread-bench-")
    root = os.path.realpath(os.path.join(tmp, "repo"))
    try:
        build_repo(git, root, a.commits, a.loose)
        # Let the config files age past the pre-flight's racy window (2 s), as in any real checkout.
        time.sleep(3)
        cases, notes = available(a.binary, root, git)
        cases = [c for c in cases if c[0] in wanted]
        notes = [n for n in notes if n.split(":")[0] in wanted]
        commands = captured_commands(a.binary, root, git, tmp, cases)
        server = start_server(a.binary, root, git)
        ref_prefix = [git, "-C", root, f"--work-tree={root}", "--no-pager", "--no-replace-objects",
                      "--no-optional-locks"] + [x for o in REFERENCE_OVERRIDES for x in ("-c", o)]
        renv = dict(REFERENCE_ENV, PATH=os.environ.get("PATH", "/usr/bin:/bin"),
                    GIT_CEILING_DIRECTORIES=os.path.dirname(root))

        def run(argv, env_):
            subprocess.run(argv, env=env_, cwd=root, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        print(f"git {subprocess.run([git, '--version'], capture_output=True, text=True).stdout.split()[-1]}, "
              f"{a.commits} commits, {a.loose} loose objects, {a.calls} calls each, interleaved, gap {a.gap_ms:g} ms")
        for note in notes:
            print(note)
        if a.show_commands:
            for case, _, _ in cases:
                for argv, _ in commands[case]:
                    print(f"{case}: git {' '.join(subcommand(argv))}")
        print(f"{'case':<16} {'server ms':>17} {'bare git ms':>17} {'reference-shape ms':>19} "
              f"{'server/bare':>11} {'paired':>7} {'min':>6}")
        for case, tool, args in cases:
            bare = commands[case]
            subs = [subcommand(argv) for argv, _ in bare]
            samples = {"server": [], "bare": [], "reference": []}
            for i in range(a.calls + 20):
                t0 = time.perf_counter()
                ask(server, tool, args)
                t1 = time.perf_counter()
                server_s = t1 - t0
                if a.gap_ms:
                    time.sleep(a.gap_ms / 1000)
                    t1 = time.perf_counter()
                for argv, env_ in bare:
                    run(argv, env_)
                t2 = time.perf_counter()
                run(ref_prefix + ["rev-parse", "--absolute-git-dir"], renv)
                run(ref_prefix + ["rev-parse", "--path-format=absolute", "--git-common-dir"], renv)
                run(ref_prefix + ["config", "--includes", "--name-only", "--get-regexp", r"^filter\."], renv)
                for sub in subs:
                    run(ref_prefix + sub, renv)
                t3 = time.perf_counter()
                if i >= 20:  # warm-up
                    samples["server"].append(server_s * 1000)
                    samples["bare"].append((t2 - t1) * 1000)
                    samples["reference"].append((t3 - t2) * 1000)
            med = {k: statistics.median(v) for k, v in samples.items()}
            p90 = {k: percentile(v, 0.9) for k, v in samples.items()}
            paired = statistics.median(s / b for s, b in zip(samples["server"], samples["bare"]))
            least = min(samples["server"]) / min(samples["bare"])
            label = case + (f" ({len(bare)} git)" if len(bare) > 1 else "")
            print(f"{label:<16} {med['server']:>8.2f} (p90 {p90['server']:5.2f}) {med['bare']:>8.2f} (p90 {p90['bare']:5.2f})"
                  f" {med['reference']:>9.2f} (p90 {p90['reference']:5.2f}) {med['server'] / med['bare']:>10.2f}x"
                  f" {paired:>6.2f}x {least:>5.2f}x")
        server.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
