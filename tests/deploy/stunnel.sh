#!/bin/sh
# A tested deployment, client side: the product's client (`agentteams-mcp client`, plain http
# only) reaches the https endpoint of nginx.sh's deployment through a stunnel client tunnel that
# verifies the certificate: the README's recipe (section TLS) run as written, with the test's CA
# and host. Then the same tunnel trusting another CA, and one checking another host name, must
# both refuse: the client gets no answer. Installs nginx and stunnel4 with apt-get when missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/common.sh"
needs nginx nginx-light
needs stunnel4 stunnel4
make_ca
start_replicas 3
start_nginx

# tunnel NAME CAFILE HOST: a stunnel client on a free port ($tunnel_port), per the README.
tunnel() {
    tunnel_port=$(free_port)
    cat > "$work/$1.conf" <<CONF
foreground = yes
pid =
; stunnel.conf (README, "TLS")
[mcp]
client = yes
accept = 127.0.0.1:$tunnel_port
connect = localhost:$edge_port
verifyChain = yes
CAfile = $2
checkHost = $3
CONF
    stunnel4 "$work/$1.conf" > "$work/$1.log" 2>&1 &
    pids="$pids $!"
    wait_for_port "$tunnel_port"
}

tunnel verified "$tls/ca.pem" localhost
out=$("$bin" client --url "http://127.0.0.1:$tunnel_port/mcp" tools) \
    || fail "the client through a verifying tunnel: $out"
echo "$out" | grep -q test_simple_text || fail "no tool list through the tunnel: $out"
out=$("$bin" client --url "http://127.0.0.1:$tunnel_port/mcp" call test_simple_text) \
    || fail "a call through the tunnel: $out"
echo "$out" | grep -q "This is a simple text response for testing." || fail "call: $out"
echo "client through a verifying stunnel tunnel: ok"

for case in "other-ca $tls/other-ca.pem localhost" "other-host $tls/ca.pem mcp.example.com"; do
    set -- $case
    tunnel "$1" "$2" "$3"
    status=0
    "$bin" client --url "http://127.0.0.1:$tunnel_port/mcp" tools > "$work/$1.out" 2>&1 \
        || status=$?
    [ "$status" = 4 ] || fail "$1: the client got through (exit $status): $(cat "$work/$1.out")"
    grep -q -i "certificate verify failed\|CERT_CHAIN\|verification failed\|checkHost\|rejected" \
        "$work/$1.log" || fail "$1: stunnel did not say it refused: $(cat "$work/$1.log")"
    echo "tunnel refusing an unverifiable certificate ($1): client exit 4"
done
echo "stunnel deployment: ok"
