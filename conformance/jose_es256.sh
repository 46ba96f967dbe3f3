#!/bin/sh
# ES256 client assertions (`private_key_jwt`) made by agentteams_mcp, verified by jose in Node: the
# library the conformance suite's authorization server checks them with, on keys jose generates
# and hands over as the suite does (PKCS #8 PEM) and as private JWKs. Exit 0 when every assertion
# verifies with its key, carries RFC 7523's claims, and fails with another key.
#
# Needs what conformance/run.sh needs (npm on the first run, cargo).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/suite.sh"

cargo build --release --offline --quiet --manifest-path "$root/Cargo.toml" --example client_assertion
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$node" "$here/jose_es256.mjs" "$dir/node_modules/jose/dist/webapi/index.js" \
    "$root/target/release/examples/client_assertion" "$work"
