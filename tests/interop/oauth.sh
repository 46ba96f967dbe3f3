#!/bin/sh
# Interop of the OAuth resource server (--auth-config): the official Python SDK (mcp 2.3.0) with
# its OAuthClientProvider logs in through the whole MCP authorization flow, against a small
# authorization server the Python script runs (python_sdk_oauth.py beside this script), with RS256,
# PS256, ES256 and EdDSA access tokens in turn, and steps up to a tool's scope on 403.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/venv.sh"
cargo build --quiet --offline --manifest-path "$root/Cargo.toml" -p agentteams-mcp-fixtures
for alg in RS256 PS256 ES256 EdDSA; do
    "$venv/bin/python" "$here/python_sdk_oauth.py" "$root/target/debug/agentteams-mcp-fixtures" "$alg"
done
