#!/usr/bin/env bash
# The client under test for the official conformance suite's client scenarios: the suite runs
# `client.sh <server URL>` with MCP_CONFORMANCE_SCENARIO set, and requires exit 0.
set -euo pipefail
bin="${AGENTTEAMS_MCP_BIN:?set AGENTTEAMS_MCP_BIN to the agentteams-mcp binary}"
url="${!#}"
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  initialize) exec "$bin" client --url "$url" info ;;
  tools_call) exec "$bin" client --url "$url" call add_numbers --arg a=2 --arg b=3 ;;
  sse-retry) exec "$bin" client --url "$url" call test_reconnection ;;
  # The suite's server sends this elicitation on the standalone GET stream, which the client
  # opens after the handshake and answers on.
  elicitation-sep1034-client-defaults)
    exec "$bin" client --url "$url" --answer-defaults call test_client_elicitation_defaults ;;
  *) echo "client.sh: no client behaviour for scenario ${MCP_CONFORMANCE_SCENARIO:-(unset)}" >&2; exit 1 ;;
esac
