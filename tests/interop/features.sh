#!/usr/bin/env bash
# Interop of resources, prompts and completion: the official Python SDK (mcp 2.3.0) lists and
# reads gitread's and recall's resources, gets their prompts and asks completions
# (python_sdk_features.py beside this script), over stdio and over Streamable HTTP, in the
# 2026-07-28 era and the legacy era, on a fixture repository and a fixture project this script
# makes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$here/venv.sh"
cargo build --release --offline -p agentteams-mcp-servers --manifest-path "$root/Cargo.toml"
bin="$root/target/release/agentteams-mcp"
work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

. "$here/fixture_repo.sh"
repo="$work/repo"
make_fixture_repo "$repo"

project="$work/project"
mkdir -p "$project/references/plans"
printf '# Sprocket plan\n\nSprockets mesh with gears; the plan covers sprocket sizing and sprocket wear over time.\n' \
    > "$project/references/plans/sprocket.md"
"$bin" index build --root "$project" 2>/dev/null

# serve NAME ROOT: starts the server over Streamable HTTP on a free port; sets $url.
serve() {
    local log="$work/$1.log"
    "$bin" --serve-mcp "$1" --root "$2" --http --port 0 2>"$log" &
    pids+=("$!")
    url=""
    for _ in $(seq 1 100); do
        url=$(sed -n 's#.*Streamable HTTP on http://127\.0\.0\.1:\([0-9]*\)/mcp.*#http://localhost:\1/mcp#p' "$log")
        [ -n "$url" ] && return
        sleep 0.1
    done
    echo "features.sh: $1 did not start over HTTP" >&2
    cat "$log" >&2
    exit 1
}

serve gitread "$repo"
"$venv/bin/python" "$here/python_sdk_features.py" gitread "$repo" "stdio:$bin" "$url"
serve recall "$project"
"$venv/bin/python" "$here/python_sdk_features.py" recall "$project" "stdio:$bin" "$url"
