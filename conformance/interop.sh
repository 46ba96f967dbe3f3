#!/bin/sh
# Interop over Streamable HTTP: the official Python SDK (mcp 2.3.0) drives the conformance fixture
# server in every connect mode (conformance/python_sdk_http.py). Installs the SDK into the same
# private virtualenv as tests/interop/run.sh ($AGENTTEAMS_INTEROP_VENV, default target/interop-venv).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
venv=${AGENTTEAMS_INTEROP_VENV:-$root/target/interop-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'mcp==2.3.0'
fi
. "$here/fixture.sh"
"$venv/bin/python" "$here/python_sdk_http.py" "$url"
