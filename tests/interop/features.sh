#!/usr/bin/env bash
# Interop of resources, prompts and completion: the official Python SDK (mcp 2.3.0) lists and
# reads gitread's and recall's resources, gets their prompts and asks completions
# (python_sdk_features.py beside this script), over stdio and over Streamable HTTP, in the
# 2026-07-28 era and the legacy era, on a fixture repository and a fixture project this script
# makes (servers.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$here/venv.sh"
. "$here/servers.sh"

serve gitread "$repo"
"$venv/bin/python" "$here/python_sdk_features.py" gitread "$repo" "stdio:$bin" "$url"
serve recall "$project"
"$venv/bin/python" "$here/python_sdk_features.py" recall "$project" "stdio:$bin" "$url"
