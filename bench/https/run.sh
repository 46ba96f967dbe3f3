#!/usr/bin/env bash
# What https through the TLS helper costs the client (servers/examples/https_cost.rs): the
# conformance server on loopback, stunnel with a throwaway CA's certificate in front of it, and the
# client measured both ways on the same server, rounds interleaved.
#
# Usage: bench/https/run.sh [ROUNDS] [SAMPLES]   (needs openssl and stunnel4; builds release)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/https-cost.XXXXXX")
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
cd "$root"
cargo build --release --offline -q -p agentteams-mcp-fixtures
cargo build --release --offline -q -p agentteams-mcp-servers --example https_cost
bin=${CARGO_TARGET_DIR:-$root/target}/release
stunnel=$(command -v stunnel4 || command -v stunnel || echo /usr/bin/stunnel4)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

(
    cd "$work"
    o=/usr/bin/openssl
    $o req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -keyout ca.key \
        -out ca.pem -subj "/CN=https bench CA" 2>/dev/null
    $o req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key \
        -out server.csr -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=DNS:localhost\n' > server.ext
    $o x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 \
        -extfile server.ext -out server.pem 2>/dev/null
)
http_port=$(port)
tls_port=$(port)
"$bin/agentteams-mcp-fixtures" --serve-mcp conformance --http --port "$http_port" 2>/dev/null &
pids="$pids $!"
cat > "$work/stunnel.conf" <<CONF
foreground = yes
pid =
output = $work/stunnel.log
[mcp]
accept = 127.0.0.1:$tls_port
connect = 127.0.0.1:$http_port
cert = $work/server.pem
key = $work/server.key
CONF
"$stunnel" "$work/stunnel.conf" 2>/dev/null &
pids="$pids $!"
for _ in $(seq 100); do
    grep -q "Configuration successful" "$work/stunnel.log" 2>/dev/null && break
    sleep 0.1
done
"$bin/examples/https_cost" "http://127.0.0.1:$http_port/mcp" "https://localhost:$tls_port/mcp" \
    "$work/ca.pem" "$@"
