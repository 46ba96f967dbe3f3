#!/usr/bin/env bash
# Interop with the official TypeScript SDK (@modelcontextprotocol/sdk, pinned below, installed
# from npm into a cache folder once): its Client over StdioClientTransport and
# StreamableHTTPClientTransport drives the release binary (typescript_sdk.mjs beside this script):
# gitread on the fixture repository of fixture_repo.sh, recall on a project whose indexes this
# script builds, and the conformance fixture for the server-to-client requests the TS client
# answers (elicitation with defaults, sampling, roots). Last, a copy of the script with one
# expectation made wrong must fail, so the checks are known to bite.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

sdk_version=${TS_SDK_VERSION:-1.32.2}
sdk_dir=${TS_SDK_DIR:-${TMPDIR:-/tmp}/agentteams-ts-sdk}
if ! grep -q "\"version\": \"$sdk_version\"" "$sdk_dir/node_modules/@modelcontextprotocol/sdk/package.json" 2>/dev/null; then
    mkdir -p "$sdk_dir"
    npm install --prefix "$sdk_dir" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/sdk@$sdk_version" >&2
fi
# Node 20 or later (the SDK needs 18); the conformance runner's Node 22 would do as well.
node=${NODE:-node}
. "$here/servers.sh"

serve gitread "$repo"
"$node" "$here/typescript_sdk.mjs" "$sdk_dir" gitread "$repo" "stdio:$bin" "$url"
serve recall "$project"
"$node" "$here/typescript_sdk.mjs" "$sdk_dir" recall "$project" "stdio:$bin" "$url"
serve conformance
"$node" "$here/typescript_sdk.mjs" "$sdk_dir" conformance - "stdio:$fixtures_bin" "$url"

# The checks must be able to fail: expect a path the fixture does not have.
sed 's/\["big.txt"\], `${where}: path completion at HEAD`/["bigger.txt"], `${where}: path completion at HEAD`/' \
    "$here/typescript_sdk.mjs" > "$work/wrong_expectation.mjs"
if cmp -s "$here/typescript_sdk.mjs" "$work/wrong_expectation.mjs"; then
    echo "typescript.sh: the wrong-expectation copy is unchanged; update its sed" >&2
    exit 1
fi
if "$node" "$work/wrong_expectation.mjs" "$sdk_dir" gitread "$repo" "stdio:$bin" 2>"$work/wrong.err"; then
    echo "typescript.sh: a wrong expectation passed; the checks do not bite" >&2
    exit 1
fi
grep -q 'path completion at HEAD' "$work/wrong.err" || { cat "$work/wrong.err" >&2; exit 1; }
echo "ok: a wrong expectation fails ($(head -c 200 "$work/wrong.err" | head -1))"
