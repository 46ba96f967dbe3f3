#!/usr/bin/env bash
# pip install: builds the Python wheel that carries the binary (maturin, a build tool from PyPI,
# pinned below; servers/pyproject.toml), installs it with pip from the wheel file alone
# (--no-index: nothing else is fetched) into a fresh virtualenv, and runs both servers from the
# installed command over stdio: gitread on the interop fixture repository lists its tools and
# answers git_log; recall answers query_index on a project whose indexes the installed binary
# built. Last, a wrong expectation must fail, so the check is known to bite.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
maturin_version=${MATURIN_VERSION:-1.16.0}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/build"
"$work/build/bin/pip" install -q "maturin==$maturin_version"
"$work/build/bin/maturin" build -q --release --offline -m "$root/servers/Cargo.toml" -o "$work/dist"

python3 -m venv "$work/run"
"$work/run/bin/pip" install -q --no-index "$work"/dist/agentteams_mcp-*.whl
bin="$work/run/bin/agentteams-mcp"
"$bin" --version

. "$root/tests/interop/fixture_repo.sh"
make_fixture_repo "$work/repo"
mkdir -p "$work/project/references/plans"
printf '# Sprocket plan\n\nSprockets mesh with gears; the plan covers sprocket sizing.\n' \
    > "$work/project/references/plans/sprocket.md"
"$bin" index build --root "$work/project" 2>/dev/null

# One stdio session: initialize, then each request; prints each reply's result as JSON lines.
check() {
    python3 - "$@" <<'PY'
import json, subprocess, sys
binary, server, root, expect = sys.argv[1:5]
requests = [json.loads(r) for r in sys.argv[5:]]
init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "wheel-check", "version": "1"}}}
lines = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
lines += [dict(r, jsonrpc="2.0", id=i + 1) for i, r in enumerate(requests)]
out = subprocess.run([binary, "--serve-mcp", server, "--root", root],
                     input="".join(json.dumps(m) + "\n" for m in lines),
                     capture_output=True, text=True, timeout=60).stdout
replies = [json.loads(l) for l in out.splitlines()]
assert len(replies) == len(requests) + 1, out
text = json.dumps([r.get("result") for r in replies])
assert expect in text, f"{server}: {expect!r} not in {text[:500]}"
print(f"ok: {server} from the wheel: {expect!r}")
PY
}
check "$bin" gitread "$work/repo" 'git_refs' '{"method": "tools/list"}'
check "$bin" gitread "$work/repo" 'interop fixture commit' \
    '{"method": "tools/call", "params": {"name": "git_log", "arguments": {"n": 2}}}'
check "$bin" recall "$work/project" 'sprocket.md' \
    '{"method": "tools/call", "params": {"name": "query_index", "arguments": {"query": "sprocket sizing"}}}'
if check "$bin" recall "$work/project" 'no such answer' '{"method": "tools/list"}' 2>/dev/null; then
    echo "a wrong expectation passed: the check does not bite"; exit 1
fi
echo "ok: a wrong expectation fails"
