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
  # Every auth scenario: log in the way a headless user would (the suite's authorization server
  # approves at once), with what its context gives a real user (a registered client's id and
  # secret) and this client's metadata document URL, into a token store of this run's own; then
  # call the server's tool. Machine clients (client-credentials-*) use that grant; an enterprise
  # user (cross-app-access-*) brings an identity provider's ID token (--grant id-jag, SEP-990).
  auth/*)
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    oauth=(--oauth --login-mode headless --token-store "$work/tokens.json"
      --client-metadata-url https://conformance-test.local/client-metadata.json)
    if [[ "${MCP_CONFORMANCE_CONTEXT:-}" == *'"client_id"'* ]]; then
      (umask 077 && printf '%s' "$MCP_CONFORMANCE_CONTEXT" >"$work/client.json")
      oauth+=(--client-file "$work/client.json")
    fi
    case "$MCP_CONFORMANCE_SCENARIO" in
      auth/client-credentials-*) oauth+=(--grant client-credentials) ;;
      auth/cross-app-access-*) oauth+=(--grant id-jag) ;;
    esac
    "$bin" client --url "$url" "${oauth[@]}" call test-tool ;;
  *) echo "client.sh: no client behaviour for scenario ${MCP_CONFORMANCE_SCENARIO:-(unset)}" >&2; exit 1 ;;
esac
