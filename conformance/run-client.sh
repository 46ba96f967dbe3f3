#!/usr/bin/env bash
# Runs the official conformance suite (0.1.16) against `agentteams-mcp client` for the client
# scenarios the product supports: initialize, tools_call, sse-retry and
# elicitation-sep1034-client-defaults (PROTOCOL.md §21.6).
# Needs npm on first use (suite.sh installs Node 22 and the suite). CI keys on the exit status.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
top="$(dirname "$here")"
. "$here/suite.sh"
cargo build --release --offline -p agentteams-mcp-servers --manifest-path "$top/Cargo.toml"
export AGENTTEAMS_MCP_BIN="$top/target/release/agentteams-mcp"
status=0
for scenario in initialize tools_call sse-retry elicitation-sep1034-client-defaults; do
  "$node" "$suite" client --command "$here/client.sh" --scenario "$scenario" \
    --timeout 30000 || status=1
done
exit "$status"
