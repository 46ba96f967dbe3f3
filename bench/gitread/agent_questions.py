#!/usr/bin/env python3
"""Bytes an agent reads per answer: gitread against the official mcp-server-git, same repository.

For each common question an agent asks of git, this runs the calls an agent would make with each
server's tools, over stdio MCP (bench/gitread/mcp_stdio.py, no SDK), checks that the replies hold
the answer (the expected fact computed independently with plain `git` on the same clone), and
reports per question the number of calls and the bytes of result text each server needed (the text
content exactly as the client receives it, UTF-8), and the ratio.

The repository is a `git clone --no-local` of this project's own history (300+ commits) in a
temporary directory, or --repo PATH. In a fresh clone the script makes, as an agent's repository
would have them: local branches for the clone's remote-tracking branches, three annotated tags
along the first-parent line (only when the clone has no tag), and one untracked file.

mcp-server-git is installed from PyPI into this benchmark's own virtualenv, made on first use
under --cache (default ~/.cache/agentteams-bench): `python3 -m venv`, `pip install mcp-server-git`
(or --mcp-server-git-spec, e.g. mcp-server-git==2026.10.19); its version is recorded. It is
started with `--repository REPO` and every call passes `repo_path`.

A plan uses a gitread tool or argument only if tools/list declares it. A question whose gitread
answer needs a tool or argument not yet served is skipped on that side with a note ("needs tool
git_refs"); where today's tools can still answer, the plan does so and says how ("fallback: ...").
Where mcp-server-git has no tool for a question, its side says "cannot answer", or counts the
cheapest mechanical fallback its tools allow and says so.

Usage:
  cargo build --release --offline -p agentteams-mcp-servers
  python3 bench/gitread/agent_questions.py [--binary target/release/agentteams-mcp] [--repo PATH]
      [--json FILE] [--cache DIR] [--mcp-server-git-spec SPEC]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_stdio import StdioServer  # noqa: E402

GITREAD = "gitread"
MCP_GIT = "mcp-server-git"
FIXED_DATE = "2026-12-01T00:00:00Z"


class Skip(Exception):
    """This side does not answer the question: a tool it lacks, or no way with its tools."""


def git(repo, *args, check=True):
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", LC_ALL="C",
               GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.com",
               GIT_AUTHOR_DATE=FIXED_DATE, GIT_COMMITTER_DATE=FIXED_DATE)
    return subprocess.run(["git", "-C", repo, *args], check=check, env=env,
                          capture_output=True, text=True).stdout


# --------------------------------------------------------------------------------------------
# Setup: the venv with mcp-server-git, the clone, the facts.

def mcp_server_git(cache, spec):
    venv = os.path.join(cache, "mcp-server-git-venv")
    exe = os.path.join(venv, "bin", "mcp-server-git")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(exe):
        os.makedirs(cache, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", spec], check=True)
    version = subprocess.run([py, "-c", "import importlib.metadata as m; print(m.version('mcp-server-git'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    return exe, version


def make_clone(source, dest):
    subprocess.run(["git", "clone", "-q", "--no-local", source, dest], check=True)
    current = git(dest, "rev-parse", "--abbrev-ref", "HEAD").strip()
    for ref in git(dest, "for-each-ref", "--format=%(refname:short)", "refs/remotes/origin").split():
        name = ref.split("/", 1)[1] if "/" in ref else ""
        if name and name not in ("HEAD", current):
            git(dest, "branch", "-q", name, ref)
    make_tags(dest)
    with open(os.path.join(dest, "notes.txt"), "w") as f:
        f.write("scratch notes, not tracked\n")


def make_tags(repo):
    """Three annotated tags along the first-parent line, when the repository has no tag."""
    if git(repo, "tag").strip():
        return False
    line = git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").split()
    if len(line) < 10:
        raise SystemExit(f"{repo}: too few commits on the first-parent line to place tags")
    for tag, at in (("v0.1", len(line) // 3), ("v0.2", 2 * len(line) // 3), ("v0.3", len(line) - 5)):
        git(repo, "tag", "-a", "-m", f"release {tag}", tag, line[at])
    return True


def facts(repo):
    """The questions' parameters, chosen from the repository, and the expected answers by plain git."""
    f = {}
    tags = git(repo, "tag", "--sort=creatordate").split()
    if len(tags) < 2:
        raise SystemExit("the repository needs at least two tags")
    # Files: the documentation of gitread (edited often) and its repository checks (Rust source).
    f["doc"] = "docs/gitread.md"
    f["src"] = "servers/src/gitread/repo.rs"
    f["big"] = "SECURITY.md"
    # 1. The last 3 commits touching doc, and their patches to it.
    f["log3"] = git(repo, "log", "-3", "--format=%H", "--", f["doc"]).split()
    # 2. Who last changed line N of doc.
    lines = git(repo, "show", f"HEAD:{f['doc']}").splitlines()
    f["blame_line"] = len(lines) * 2 // 3
    porcelain = git(repo, "blame", "--porcelain", "-L", f"{f['blame_line']},{f['blame_line']}", "HEAD",
                    "--", f["doc"])
    f["blame_commit"] = porcelain.split()[0]
    f["blame_author"] = re.search(r"^author (.*)$", porcelain, re.M).group(1)
    # 3. Which tags contain commit C: C is the commit just after the first tag, on the first-parent line.
    line = git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").split()
    first_tagged = git(repo, "rev-parse", f"{tags[0]}^{{commit}}").strip()
    f["contains_commit"] = line[line.index(first_tagged) + 1] if first_tagged in line else line[len(line) // 2]
    f["tags_containing"] = git(repo, "tag", "--contains", f["contains_commit"]).split()
    f["tags_not_containing"] = sorted(set(tags) - set(f["tags_containing"]))
    # 4. Show src as of the middle tag.
    f["tag"] = tags[len(tags) // 2]
    f["file_at_tag"] = git(repo, "show", f"{f['tag']}:{f['src']}")
    # 5. Where is `pub fn inspect(` defined at HEAD.
    # (Spelt in two parts so that this file, once committed, is not a match itself.)
    f["definition"] = "pub fn " + "inspect("
    f["definition_at"] = [tuple(x.split(":", 3)[1:3]) for x in
                          git(repo, "grep", "-n", "-F", f["definition"], "HEAD", "--", "*.rs").splitlines()]
    # 6. Local branches.
    f["branches"] = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    # 7. Commits by the most frequent author since the date of the 60th newest commit.
    f["author"] = git(repo, "shortlog", "-sn", "HEAD").splitlines()[0].split("\t", 1)[1]
    f["since"] = git(repo, "log", "-1", "--skip=59", "--format=%cd", "--date=format:%Y-%m-%d %H:%M:%S",
                     "HEAD").strip()
    f["author_since"] = git(repo, "log", f"--author={f['author']}", f"--since={f['since']}",
                            "--format=%H", "HEAD").split()
    # 8. Files changed in commit C (the newest non-merge commit among the last 20 changing most files).
    best = None
    for h in git(repo, "log", "-20", "--no-merges", "--format=%H").split():
        names = git(repo, "show", "--format=", "--name-only", h).split()
        if best is None or len(names) > len(best[1]):
            best = (h, names)
    f["overview_commit"], f["overview_files"] = best
    # 9. The diff of doc between the two newest tags (neither is HEAD).
    f["diff_base"], f["diff_head"] = tags[-2], tags[-1]
    f["diff_file"] = f["doc"] if git(repo, "diff", "--name-only", tags[-2], tags[-1], "--", f["doc"]).strip() \
        else git(repo, "diff", "--name-only", tags[-2], tags[-1]).split()[0]
    f["diff_text"] = git(repo, "diff", tags[-2], tags[-1], "--", f["diff_file"])
    # 10. Is the working tree clean.
    f["status"] = git(repo, "status", "--porcelain").splitlines()
    # 11. Commits whose message mentions WORD.
    f["word"] = "FIFO"
    f["word_commits"] = git(repo, "log", f"--grep={f['word']}", "--format=%H", "HEAD").split()
    # 12. The last 5 commits.
    f["last5"] = git(repo, "log", "-5", "--format=%H").split()
    # 13. What commit C changed in doc: the newest non-merge commit touching doc and at least two
    # other files (so that the question is about one file of several).
    touching = git(repo, "log", "--no-merges", "--format=%H", "--", f["doc"]).split()
    f["commit_file_commit"] = next(
        (h for h in touching if len(git(repo, "show", "--format=", "--name-only", h).split()) >= 3),
        touching[0])
    f["commit_file_diff"] = git(repo, "show", "--format=", f["commit_file_commit"], "--", f["doc"])
    # 14. Lines 10-30 of big at HEAD.
    f["range"] = (10, 30)
    f["range_lines"] = git(repo, "show", f"HEAD:{f['big']}").splitlines()[9:30]
    f["tags"] = tags
    f["commits"] = len(git(repo, "rev-list", "HEAD").split())
    return f


# --------------------------------------------------------------------------------------------
# A session: one server, the calls one question made.

class Session:
    def __init__(self, server, kind, repo):
        self.server, self.kind, self.repo = server, kind, repo
        self.calls, self.notes = [], []

    def call(self, tool, **arguments):
        if self.kind == MCP_GIT:
            arguments = dict(repo_path=self.repo, **arguments)
        c = self.server.call(tool, arguments)
        self.calls.append(c)
        return c

    def need(self, tool, *arguments):
        missing = self.server.missing(tool, *arguments)
        if missing:
            raise Skip(missing)

    def has(self, tool, *arguments):
        return self.server.has(tool, *arguments)

    def call_paged(self, tool, done=None, **arguments):
        """gitread: call, and while the result is cut with `offset=N` on its last line (and the
        tool takes `offset`), call again from there, until done(text so far) holds."""
        c = self.call(tool, **arguments)
        text = c.output()
        while not (done and done(text)) and self.has(tool, "offset"):
            m = re.search(r"offset=(\d+)", text.rstrip("\n").rsplit("\n", 1)[-1])
            if not m:
                break
            c = self.call(tool, **dict(arguments, offset=int(m.group(1))))
            text += c.output()
        return text

    def outputs(self):
        return "\n".join(c.output() for c in self.calls)


def mg_walk(s, wanted, need, step=20):
    """mcp-server-git: list commits with git_log (no path filter, no paging: a larger max_count
    re-reads the newest), git_show each in order (skipping merges, whose first-parent patch is a
    whole branch), until `need` commits satisfy wanted(show text). Returns those commits."""
    found, shown, count = [], set(), step
    while True:
        log = s.call("git_log", max_count=count).output()
        entries = re.findall(r"^Commit: ([0-9a-f]{40})\nAuthor: .*\nDate: .*\nMessage: (.*)$", log, re.M)
        for h, subject in entries:
            if h in shown:
                continue
            shown.add(h)
            if subject.startswith("Merge "):
                continue
            if wanted(s.call("git_show", revision=h).output()):
                found.append(h)
                if len(found) == need:
                    return found
        if len(entries) < count:
            return found
        count *= 2


def touches(path):
    return lambda show: f"--- a/{path}\n" in show or f"+++ b/{path}\n" in show


# --------------------------------------------------------------------------------------------
# The questions: (key, question, gitread plan, mcp-server-git plan, check). A plan returns a note
# or None; a check returns None when the replies answer the question, else what is missing.

def diff_lines(patch):
    """The changed lines of a patch, with their sign, without the file headers."""
    return [l for l in patch.splitlines()
            if l[:1] in "+-" and not l.startswith(("+++ ", "--- "))]


def commits_missing(s, hashes):
    """None when every commit is named in the replies (its full hash, or an abbreviation of at
    least 7 hex digits standing as a word, as git prints with %h), else which are not."""
    out = s.outputs()
    words = set(re.findall(r"\b[0-9a-f]{7,40}\b", out))
    missing = [h[:8] for h in hashes if h not in out and not any(h.startswith(w) for w in words)]
    if missing:
        return f"{len(missing)} of {len(hashes)} commits not named, first {missing[0]}"


def lines_missing(s, lines):
    """None when every non-blank line is in the replies, else how many are not."""
    out = s.outputs()
    missing = [l for l in lines if l.strip() and l not in out]
    if missing:
        return f"{len(missing)} of {len(lines)} lines missing, first {missing[0][:40]!r}"


def ref_named(out, name):
    """Whether a ref name stands as a word of the replies (`v0.2`, `refs/tags/v0.2`, `* main`)."""
    return re.search(rf"(^|\s|\*|/){re.escape(name)}(\s|$)", out, re.M) is not None


def q_log3(F):
    def gr(s):
        log = s.call("git_log", path=F["doc"], n=3).output()
        for h in re.findall(r"^([0-9a-f]{7,40})\b", log, re.M):
            s.call_paged("git_show", rev=h, path=F["doc"])

    def mg(s):
        mg_walk(s, touches(F["doc"]), 3)
        return "fallback: git_log has no path filter; git_show each commit until 3 touch the file"

    def check(s):
        # A merge's change may be shown as git show shows it (the combined diff) or against its
        # first parent (what mcp-server-git's git_show prints); either answers the question.
        missing = commits_missing(s, F["log3"])
        for h in F["log3"]:
            if missing:
                break
            forms = [git(s.repo, "show", "--format=", h, "--", F["doc"])]
            if len(git(s.repo, "rev-list", "--parents", "-n1", h).split()) > 2:
                forms.append(git(s.repo, "diff", f"{h}^1", h, "--", F["doc"]))
            verdicts = [lines_missing(s, diff_lines(form)) for form in forms]
            missing = None if None in verdicts else verdicts[0]
        return missing
    return ("log3", f"what changed in the last 3 commits touching {F['doc']}", gr, mg, check)


def q_blame(F):
    n = F["blame_line"]

    def rows(text):
        return [l for l in text.splitlines() if re.match(r"^\^?[0-9a-f]{7,40} ", l)]

    def gr(s):
        s.call_paged("git_blame", done=lambda text: len(rows(text)) >= n, path=F["doc"], rev="HEAD")

    def mg(s):
        raise Skip("cannot answer: no blame; rebuilding it from every commit's patch is not practical")

    def check(s):
        rows_ = rows(s.outputs())
        if len(rows_) < n:
            return f"only {len(rows_)} blame lines"
        row = rows_[n - 1]
        prefix = row.lstrip("^").split()[0]
        if not F["blame_commit"].startswith(prefix) or F["blame_author"] not in row:
            return f"line {n}: {row[:60]!r}, expected {F['blame_commit'][:8]} {F['blame_author']}"
    return ("blame", f"who last changed line {n} of {F['doc']}", gr, mg, check)


def q_tags(F):
    c = F["contains_commit"]

    def gr(s):
        s.need("git_refs", "kind", "contains")
        s.call("git_refs", kind="tag", contains=c)

    def mg(s):
        raise Skip("cannot answer: no tag listing (git_branch lists branches; its contains filters branches)")

    def check(s):
        out = s.outputs()
        wrong = [t for t in F["tags_not_containing"] if ref_named(out, t)]
        missing = [t for t in F["tags_containing"] if not ref_named(out, t)]
        if missing or wrong:
            return f"missing {missing}, wrongly listed {wrong}"
    return ("tags", f"which tags contain commit {c[:8]}", gr, mg, check)


def q_file_at_tag(F):
    def gr(s):
        s.call_paged("git_file", path=F["src"], rev=F["tag"])

    def mg(s):
        s.call("git_show", revision=f"{F['tag']}:{F['src']}")

    def check(s):
        return lines_missing(s, F["file_at_tag"].splitlines())
    return ("file_at_tag", f"show {F['src']} as of tag {F['tag']}", gr, mg, check)


def q_definition(F):
    pattern = F["definition"]

    def gr(s):
        s.need("git_grep", "pattern", "fixed_strings")
        s.call("git_grep", pattern=pattern, fixed_strings=True)

    def mg(s):
        # No grep: list the trees from the root, breadth first, and read every .rs file in tree
        # order until one holds the definition (the language is known from the question).
        queue = [""]
        while queue:
            tree = queue.pop(0)
            listing = s.call("git_show", revision=f"HEAD:{tree.rstrip('/')}" if tree else "HEAD^{tree}").output()
            for name in listing.splitlines():
                if name.endswith("/"):
                    queue.append(tree + name)
                elif name.endswith(".rs"):
                    if pattern in s.call("git_show", revision=f"HEAD:{tree}{name}").output():
                        return "fallback: no grep; walk the trees breadth first, read each .rs file until found"
        return "fallback: no grep; walked every tree"

    def check(s):
        out = s.outputs()
        for path, line in F["definition_at"]:
            if s.kind == GITREAD:
                if not re.search(rf"{re.escape(path)}[:\s-]+{line}\b", out):
                    return f"{path}:{line} not named"
            else:
                # The agent knows the path from the revision it asked for, and counts the line
                # in the file it read.
                last = s.calls[-1]
                text = last.output().splitlines()
                if last.arguments.get("revision") != f"HEAD:{path}" or len(text) < int(line) \
                        or pattern not in text[int(line) - 1]:
                    return f"{path}:{line} not in the text read"
    return ("definition", f"find where `{pattern}` is defined at HEAD", gr, mg, check)


def q_branches(F):
    def gr(s):
        s.need("git_refs", "kind", "names_only")
        s.call("git_refs", kind="branch", names_only=True)

    def mg(s):
        s.call("git_branch", branch_type="local")

    def check(s):
        out = s.outputs()
        missing = [b for b in F["branches"] if not ref_named(out, b)]
        if missing:
            return f"missing {missing}"
    return ("branches", "list the branches", gr, mg, check)


def q_author_since(F):
    def gr(s):
        s.need("git_log", "author", "since")
        s.call_paged("git_log", author=F["author"], since=F["since"], n=200)

    def mg(s):
        s.call("git_log", max_count=1000, start_timestamp=F["since"])
        return "no author filter: read all commits since the date, filter Author: by hand"

    def check(s):
        return commits_missing(s, F["author_since"])
    return ("author_since", f"commits by {F['author']} since {F['since']}"
            f" ({len(F['author_since'])})", gr, mg, check)


def q_overview(F):
    c = F["overview_commit"]

    def gr(s):
        if s.has("git_show", "stat"):
            s.call("git_show", rev=c, stat=True)
        else:
            s.call("git_show", rev=c)
            return "fallback: git_show has no stat yet (full patch)"

    def mg(s):
        s.call("git_show", revision=c)
        return "no stat: full patch"

    def check(s):
        out = s.outputs()
        missing = [p for p in F["overview_files"] if p not in out and os.path.basename(p) not in out]
        if missing:
            return f"files not named: {missing}"
    return ("overview", f"files changed in commit {c[:8]} ({len(F['overview_files'])} files)", gr, mg, check)


def q_diff_path(F):
    a, b, p = F["diff_base"], F["diff_head"], F["diff_file"]

    def gr(s):
        s.call_paged("git_diff", base=a, head=b, path=p)

    def mg(s):
        # git_diff compares a target with the work tree (no second revision, no path, "a..b"
        # refused): read the file at both tags and diff them on the agent's side.
        s.call("git_show", revision=f"{a}:{p}")
        s.call("git_show", revision=f"{b}:{p}")
        return "fallback: git_diff is target vs work tree only; read both versions, diff by hand"

    def check(s):
        if s.kind == MCP_GIT:
            # Both versions whole: the agent diffs them itself.
            old, new = (c.output() for c in s.calls[-2:])
            if old != git(s.repo, "show", f"{a}:{p}") or new != git(s.repo, "show", f"{b}:{p}"):
                return "the two versions read are not the file at the two tags"
            return None
        return lines_missing(s, diff_lines(F["diff_text"]))
    return ("diff_path", f"diff of {p} between {a} and {b}", gr, mg, check)


def q_status(F):
    def gr(s):
        s.call("git_status")

    def mg(s):
        s.call("git_status")

    def check(s):
        out = s.outputs()
        if not F["status"]:
            return None if "clean" in out else "does not say clean"
        missing = [l[3:] for l in F["status"] if l[3:] not in out]
        if missing:
            return f"not named: {missing}"
    what = "clean" if not F["status"] else f"no: {len(F['status'])} untracked or changed"
    return ("status", f"is the working tree clean ({what})", gr, mg, check)


def q_word(F):
    w = F["word"]

    def gr(s):
        s.need("git_log", "grep")
        s.call_paged("git_log", grep=w, n=200)

    def mg(s):
        s.call("git_log", max_count=1000)
        return "no message filter: read every commit's message, search by hand"

    def check(s):
        return commits_missing(s, F["word_commits"])
    return ("word", f"commits whose message mentions {w} ({len(F['word_commits'])})", gr, mg, check)


def q_last5(F):
    def gr(s):
        s.call("git_log", n=5)

    def mg(s):
        s.call("git_log", max_count=5)

    def check(s):
        return commits_missing(s, F["last5"])
    return ("last5", "the last 5 commits", gr, mg, check)


def q_commit_file(F):
    c, p = F["commit_file_commit"], F["doc"]

    def gr(s):
        s.call_paged("git_show", rev=c, path=p)

    def mg(s):
        s.call("git_show", revision=c)
        return "no path argument: the whole commit"

    def check(s):
        return lines_missing(s, diff_lines(F["commit_file_diff"]))
    return ("commit_file", f"what commit {c[:8]} changed in {p}", gr, mg, check)


def q_range(F):
    start, end = F["range"]

    def gr(s):
        s.call("git_file", path=F["big"], start=start, end=end)

    def mg(s):
        s.call("git_show", revision=f"HEAD:{F['big']}")
        return "no line range: the whole file"

    def check(s):
        return lines_missing(s, F["range_lines"])
    return ("range", f"lines {start}-{end} of {F['big']} at HEAD", gr, mg, check)


QUESTIONS = [q_log3, q_blame, q_tags, q_file_at_tag, q_definition, q_branches, q_author_since,
             q_overview, q_diff_path, q_status, q_word, q_last5, q_commit_file, q_range]


def run_side(server, kind, repo, plan, check):
    s = Session(server, kind, repo)
    try:
        note = plan(s)
    except Skip as e:
        return {"status": "skipped", "note": str(e), "calls": len(s.calls),
                "bytes": sum(c.bytes for c in s.calls)}
    errors = [c for c in s.calls if c.is_error]
    failure = check(s)
    if errors:
        failure = (failure + "; " if failure else "") + f"error: {errors[0].output()[:100]}"
    return {"status": "FAILED" if failure else "ok",
            "note": "; ".join(x for x in (note, failure) if x),
            "calls": len(s.calls), "bytes": sum(c.bytes for c in s.calls),
            "detail": [c.summary() for c in s.calls]}


def cell(side):
    if side["status"] == "skipped":
        return "–", "–", side["note"]
    return str(side["calls"]), f"{side['bytes']:,}", ("ok" if side["status"] == "ok" else "**FAILED**") + \
        (f": {side['note']}" if side["note"] else "")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    top = subprocess.run(["git", "-C", here, "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True).stdout.strip()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(top, "target/release/agentteams-mcp"))
    ap.add_argument("--repo", help="an existing clone to use as it is (default: a fresh clone of this checkout)")
    ap.add_argument("--source", default=top, help="what to clone when --repo is not given")
    ap.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "agentteams-bench"))
    ap.add_argument("--mcp-server-git-spec", default="mcp-server-git")
    ap.add_argument("--json", help="where to write the JSON report (default: CACHE/agent-questions.json)")
    a = ap.parse_args()

    a.json = a.json or os.path.join(a.cache, "agent-questions.json")
    exe, mg_version = mcp_server_git(a.cache, a.mcp_server_git_spec)
    tmp = tempfile.mkdtemp(prefix="gitread-questions-")
    try:
        if a.repo:
            repo = os.path.realpath(a.repo)
            if make_tags(repo):
                print(f"{repo} had no tag: made v0.1, v0.2, v0.3 (annotated) there", file=sys.stderr)
        else:
            repo = os.path.realpath(os.path.join(tmp, "repo"))
            make_clone(a.source, repo)
        F = facts(repo)
        servers = {
            GITREAD: StdioServer([os.path.abspath(a.binary), "--serve-mcp", "gitread", "--root", repo]),
            MCP_GIT: StdioServer([exe, "--repository", repo]),
        }
        info = {k: v.server_info() for k, v in servers.items()}
        results = []
        for make in QUESTIONS:
            key, question, gr, mg, check = make(F)
            row = {"key": key, "question": question}
            for kind, plan in ((GITREAD, gr), (MCP_GIT, mg)):
                row[kind] = run_side(servers[kind], kind, repo, plan, check)
            g, m = row[GITREAD], row[MCP_GIT]
            if g["status"] == "ok" and m["status"] == "ok" and m["bytes"]:
                row["bytes_ratio"] = float(f"{g['bytes'] / m['bytes']:.3g}")
            results.append(row)
        for s in servers.values():
            s.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    header = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "repository": a.repo or f"clone of {a.source}",
        "head": F["last5"][0], "commits": F["commits"], "tags": F["tags"], "branches": len(F["branches"]),
        "gitread": {"binary": os.path.abspath(a.binary), **info[GITREAD],
                    "tools": sorted(servers[GITREAD].tools())},
        "mcp-server-git": {"version": mg_version, **info[MCP_GIT]},
        "bytes": "UTF-8 bytes of each result's text content as the client receives it",
    }
    with open(a.json, "w") as f:
        json.dump({"run": header, "questions": results}, f, indent=1)

    print(f"gitread {info[GITREAD].get('version')} ({', '.join(header['gitread']['tools'])}) vs "
          f"mcp-server-git {mg_version}; HEAD {header['head'][:8]}, tags {', '.join(F['tags'])}")
    print()
    print("| # | question | gitread calls | gitread bytes | mcp-server-git calls | mcp-server-git bytes |"
          " bytes gitread / mcp-server-git | notes |")
    print("|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(results, 1):
        gc, gb, gn = cell(r[GITREAD])
        mc, mb, mn = cell(r[MCP_GIT])
        ratio = "–" if "bytes_ratio" not in r else \
            f"{r['bytes_ratio']:.2f}x" if r["bytes_ratio"] >= 0.1 else f"{r['bytes_ratio']:.2g}x"
        print(f"| {i} | {r['question']} | {gc} | {gb} | {mc} | {mb} | {ratio} | gitread {gn}; mcp-server-git {mn} |")
    answered = [r for r in results if r[GITREAD]["status"] == "ok"]
    print()
    print(f"gitread answered {len(answered)}/{len(results)}; mcp-server-git answered "
          f"{sum(r[MCP_GIT]['status'] == 'ok' for r in results)}/{len(results)}; "
          f"failed checks: gitread {sum(r[GITREAD]['status'] == 'FAILED' for r in results)}, "
          f"mcp-server-git {sum(r[MCP_GIT]['status'] == 'FAILED' for r in results)}. JSON: {a.json}")


if __name__ == "__main__":
    main()
