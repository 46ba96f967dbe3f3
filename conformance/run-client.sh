#!/usr/bin/env bash
# Runs the official conformance suite (0.1.16) against `agentteams-mcp client` for the client
# scenarios the product supports: initialize, tools_call, sse-retry,
# elicitation-sep1034-client-defaults and the 22 auth scenarios (PROTOCOL.md §21.6; the OAuth
# client logs in headless, docs/client.md "Logging in").
# Needs npm on first use (suite.sh installs Node 22 and the suite). CI keys on the exit status.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
top="$(dirname "$here")"
. "$here/suite.sh"
cargo build --release --offline -p agentteams-mcp-servers --manifest-path "$top/Cargo.toml"
export AGENTTEAMS_MCP_BIN="$top/target/release/agentteams-mcp"
status=0
auth="auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3
  auth/basic-cimd auth/scope-from-www-authenticate auth/scope-from-scopes-supported
  auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
  auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
  auth/pre-registration auth/2025-03-26-oauth-metadata-backcompat
  auth/2025-03-26-oauth-endpoint-fallback auth/resource-mismatch auth/offline-access-scope
  auth/offline-access-not-supported auth/client-credentials-jwt auth/client-credentials-basic
  auth/cross-app-access-complete-flow"
for scenario in initialize tools_call sse-retry elicitation-sep1034-client-defaults $auth; do
  "$node" "$suite" client --command "$here/client.sh" --scenario "$scenario" \
    --timeout 30000 || status=1
done
exit "$status"
