#!/usr/bin/env bash
# Interop over stdio: the official Python SDK (mcp 2.3.0) drives the release binary in the
# 2026-07-28 era (mode=auto probes server/discover) and the legacy era (mode=legacy), for gitread
# on a fixture repository (every tool, the log filters, stat, and a cut answer continued with
# offset; structuredContent checked against each tool's outputSchema) and recall on an empty
# project.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$here/venv.sh"
cargo build --release --offline -p agentteams-mcp-servers --manifest-path "$root/Cargo.toml"
. "$here/fixture_repo.sh"
repo="$(mktemp -d)"
trap 'rm -rf "$repo"' EXIT
make_fixture_repo "$repo"
"$venv/bin/python" "$here/python_sdk.py" "$root/target/release/agentteams-mcp" \
  gitread "$repo" \
  git_log '{"n": 2}' 'interop fixture commit' \
  git_status '{}' '(working tree clean' \
  git_file '{"path": "a.txt", "rev": "HEAD~1"}' 'a.txt at HEAD~1: 4 bytes, 1 line' \
  git_show '{"rev": "HEAD"}' 'call again with offset=' \
  git_show '{"rev": "HEAD", "offset": 61000}' '+1700 a numbered line' \
  git_show '{"rev": "HEAD", "stat": true}' '9000	0	big.txt' \
  git_log '{"author": "interop", "grep": "fixture", "stat": true}' 'interop fixture commit' \
  git_refs '{"kind": "tag", "contains": "HEAD~1"}' 'v1.0' \
  git_refs '{"names_only": true}' '* main' \
  git_grep '{"pattern": "^9000 a numbered", "path": "big.txt"}' 'HEAD:big.txt:9000:9000 a numbered line'
"$venv/bin/python" "$here/python_sdk.py" "$root/target/release/agentteams-mcp" \
  recall "$repo" query_index '{"query": "anything"}' 'ERROR:no references/memory-index.json'
