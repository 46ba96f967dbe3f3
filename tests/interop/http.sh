#!/bin/sh
# Interop over Streamable HTTP: the official Python SDK (mcp 2.3.0) drives the conformance fixture
# server in every connect mode (python_sdk_http.py beside this script), and over the 2024-11-05
# HTTP+SSE transport the fixture also serves with --legacy-sse (python_sdk_sse.py).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/venv.sh"
FIXTURE_EXTRA_ARGS=--legacy-sse
. "$root/conformance/fixture.sh"
"$venv/bin/python" "$here/python_sdk_http.py" "$url"
"$venv/bin/python" "$here/python_sdk_sse.py" "${url%/mcp}"
