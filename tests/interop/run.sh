#!/usr/bin/env bash
# Interop: the official Python SDK (mcp 2.3.0) drives the release binary over stdio, in the
# 2026-07-28 era (mode=auto probes server/discover) and the legacy era (mode=legacy).
# Installs the SDK into a private virtualenv on first use.
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${AGENTTEAMS_INTEROP_VENV:-$top/target/interop-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'mcp==2.3.0'
fi
cargo build --release --offline -p agentteams-mcp-servers --manifest-path "$top/Cargo.toml"
repo="$(mktemp -d)"
trap 'rm -rf "$repo"' EXIT
git -C "$repo" init -q
echo one > "$repo/a.txt"
git -C "$repo" add a.txt
git -C "$repo" -c user.name=interop -c user.email=interop@example.invalid commit -qm "interop fixture commit"
"$venv/bin/python" "$top/tests/interop/python_sdk.py" "$top/target/release/agentteams-mcp" \
  gitread "$repo" git_log '{"n": 1}' 'interop fixture commit'
"$venv/bin/python" "$top/tests/interop/python_sdk.py" "$top/target/release/agentteams-mcp" \
  recall "$repo" query_index '{"query": "anything"}' 'no references/memory-index.json'
