#!/bin/sh
# A tested deployment: HAProxy terminating TLS (a throwaway CA made here with openssl) in front of
# three `--http` replicas sharing a session key, round robin, no stickiness, health-checked on
# /healthz. The same calls as nginx.sh: the official Python SDK, legacy-session and modern modes,
# two dozen calls each, one replica killed mid-session; and first the resumption of a closed stream
# routed by the replica named in its event id. The configuration written below is the one
# docs/deploy.md shows. Installs HAProxy with apt-get when it is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/common.sh"
needs haproxy haproxy
make_ca
start_replicas 3
set -- $replica_ports
port=$(free_port)
cat > "$work/haproxy.cfg" <<CONF
global
    maxconn 4096
    ssl-default-bind-options ssl-min-ver TLSv1.2

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 10s
    # A replica that refuses the connection (or dies before answering) is retried on another;
    # a request that got a partial answer is not replayed.
    retries 2
    option redispatch
    retry-on conn-failure empty-response response-timeout

frontend mcp_tls
    bind 127.0.0.1:$port ssl crt $tls/server-bundle.pem
    # A stream's events live in the replica that wrote them, named by the first field of every
    # event id (--replica-name): a GET resuming with Last-Event-ID goes there.
    use_backend mcp_r1 if { req.hdr(last-event-id) -m beg r1. }
    use_backend mcp_r2 if { req.hdr(last-event-id) -m beg r2. }
    use_backend mcp_r3 if { req.hdr(last-event-id) -m beg r3. }
    default_backend mcp_replicas

backend mcp_replicas
    balance roundrobin
    option httpchk GET /healthz
    http-check expect status 200
    default-server check inter 1s fall 1 rise 2
    server r1 127.0.0.1:$1
    server r2 127.0.0.1:$2
    server r3 127.0.0.1:$3

backend mcp_r1
    server r1 127.0.0.1:$1
backend mcp_r2
    server r2 127.0.0.1:$2
backend mcp_r3
    server r3 127.0.0.1:$3
CONF
haproxy -db -f "$work/haproxy.cfg" > "$work/haproxy.log" 2>&1 &
pids="$pids $!"
wait_for_port "$port"
drive_resumption "https://localhost:$port/mcp"
drive_sdk "https://localhost:$port/mcp"
echo "haproxy deployment: ok"
