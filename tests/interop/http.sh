#!/bin/sh
# Interop over Streamable HTTP: the official Python SDK (mcp 2.3.0) drives the conformance fixture
# server in every connect mode (python_sdk_http.py beside this script).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/venv.sh"
. "$root/conformance/fixture.sh"
"$venv/bin/python" "$here/python_sdk_http.py" "$url"
