# Sourced by the deployment tests (nginx.sh, haproxy.sh, stunnel.sh): the replicas, the throwaway
# CA, the packages, and the cleanup. Needs $root (the checkout) and $here (this folder).
#
# Everything lives in one temporary folder and every process started is ended by its pid when the
# script exits, however it exits.

work=$(mktemp -d "${TMPDIR:-/tmp}/agentteams-deploy.XXXXXX")
pids=""
cleanup() {
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    # Whatever has not ended after 5 s (a process caught between fork and exec) is killed.
    for _ in $(seq 50); do
        alive=""
        for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
        [ -z "$alive" ] && break
        sleep 0.1
    done
    for pid in $alive; do kill -9 "$pid" 2>/dev/null || true; done
    for pid in $pids; do wait "$pid" 2>/dev/null || true; done
    if [ "${KEEP_DEPLOY_WORK:-}" = 1 ]; then echo "work folder kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "deploy test FAILED: $*" >&2; exit 1; }

# needs COMMAND PACKAGE: installs PACKAGE with apt-get when COMMAND is missing.
needs() {
    if ! command -v "$1" >/dev/null 2>&1 && ! [ -x "/usr/sbin/$1" ]; then
        echo "installing $2 (for $1)"
        if [ -z "${apt_updated:-}" ]; then apt-get update -qq; apt_updated=1; fi
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
    fi
}
PATH="$PATH:/usr/sbin:/sbin"

# A free TCP port on loopback (the kernel's choice, released at once).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# The binary under test (its client), and the fixtures' binary beside it, whose conformance
# fixture the replicas serve (the product's --serve-mcp offers gitread and recall only).
bin=${AGENTTEAMS_MCP_BIN:-$root/target/debug/agentteams-mcp}
fixtures_bin=$(dirname "$bin")/agentteams-mcp-fixtures
if [ -z "${AGENTTEAMS_MCP_BIN:-}" ]; then
    (cd "$root" && cargo build --offline -q -p agentteams-mcp-servers -p agentteams-mcp-fixtures)
fi
[ -x "$fixtures_bin" ] || fail "no fixtures binary beside $bin: cargo build -p agentteams-mcp-fixtures"

# make_ca: a throwaway CA and a server certificate for localhost and 127.0.0.1, signed by it, in
# $work/tls (ca.pem, server.pem, server.key); and a second, unrelated CA (other-ca.pem) whose
# trust must not verify the server.
make_ca() {
    tls=$work/tls
    mkdir -p "$tls"
    (
        cd "$tls"
        for ca in ca other-ca; do
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
                -keyout "$ca.key" -out "$ca.pem" -subj "/CN=agentteams deploy test $ca" 2>/dev/null
        done
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -keyout server.key -out server.csr -subj "/CN=localhost" 2>/dev/null
        printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=CA:FALSE" \
            "keyUsage=digitalSignature" "extendedKeyUsage=serverAuth" > server.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
            -extfile server.ext -out server.pem 2>/dev/null
        cat server.pem server.key > server-bundle.pem # HAProxy wants both in one file
        chmod 600 ./*.key server-bundle.pem
    )
}

# start_replicas N: N `--http` replicas of the conformance fixture on free loopback ports, sharing
# one session key, named rI in their event ids (--replica-name), each with an access log in
# $work/replica-I.log. Sets replica_ports (space separated) and replica_pid_I.
start_replicas() {
    umask 077
    openssl rand -hex 32 > "$work/session.key"
    replica_ports=""
    i=1
    while [ "$i" -le "$1" ]; do
        log=$work/replica-$i.log
        : > "$log" # exists before the replica's shell opens it, so the wait below can read it
        "$fixtures_bin" --serve-mcp conformance --http --port 0 --session-key-file "$work/session.key" \
            --replica-name "r$i" --access-log --allow-host localhost 2> "$log" &
        pid=$!
        pids="$pids $pid"
        eval "replica_pid_$i=$pid"
        port=""
        for _ in $(seq 100); do
            port=$(sed -n 's#.*Streamable HTTP on http://127.0.0.1:\([0-9]*\)/mcp.*#\1#p' "$log" || true)
            [ -n "$port" ] && break
            sleep 0.05
        done
        [ -n "$port" ] || fail "replica $i did not start: $(cat "$log")"
        replica_ports="$replica_ports $port"
        i=$((i + 1))
    done
    replica_ports=${replica_ports# }
}

# calls_served_by I: tools/call requests replica I logged.
calls_served_by() {
    grep -c '"tool":"test_simple_text"' "$work/replica-$1.log" || true
}

# wait_for_port PORT: until something listens on 127.0.0.1:PORT (5 s at most).
wait_for_port() {
    for _ in $(seq 100); do
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),1)" 2>/dev/null && return 0
        sleep 0.05
    done
    fail "nothing listens on port $1"
}

# drive_resumption URL: a POST stream closed by its replica is resumed through the balancer
# (GET + Last-Event-ID routed by the replica named in the id), four times; an id naming no
# known replica gets 421. Run it before drive_sdk, which kills a replica.
drive_resumption() {
    python3 "$here/resume_balanced.py" "$1" "$tls/ca.pem" || fail "stream resumption through $1"
}

# drive_sdk URL: the official Python SDK (private venv) over https: refused under another CA's
# trust; then legacy-session and modern modes, two dozen calls each, killing replica 3 mid-way
# through the first; then checks that every replica served calls.
drive_sdk() {
    . "$root/tests/interop/venv.sh"
    SSL_CERT_FILE=$tls/other-ca.pem "$venv/bin/python" "$here/sdk_balanced.py" "$1" \
        --expect-refusal || fail "the Python SDK trusted a certificate it cannot verify"
    SSL_CERT_FILE=$tls/ca.pem "$venv/bin/python" "$here/sdk_balanced.py" "$1" "$replica_pid_3" \
        || fail "the Python SDK through $1"
    for i in 1 2 3; do
        n=$(calls_served_by "$i")
        [ "$n" -ge 1 ] || fail "replica $i served no call (no spreading?)"
        echo "replica $i served $n calls"
    done
}

# start_nginx: nginx terminating TLS on a free loopback port ($edge_port) in front of the
# replicas of start_replicas, plain round robin (the configuration docs/deploy.md shows).
start_nginx() {
    set -- $replica_ports
    edge_port=$(free_port)
    mkdir -p "$work/nginx"
    cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
daemon off;
$( [ "$(id -u)" = 0 ] && echo "user root;" )
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;

    upstream mcp_replicas {
        # Plain round robin: sealed sessions need no stickiness.
        server 127.0.0.1:$1 max_fails=1 fail_timeout=10s;
        server 127.0.0.1:$2 max_fails=1 fail_timeout=10s;
        server 127.0.0.1:$3 max_fails=1 fail_timeout=10s;
        keepalive 32;
    }
    # A stream's events live in the replica that wrote them, named by the first field of every
    # event id (--replica-name): a GET resuming with Last-Event-ID goes there, all else round robin.
    upstream mcp_r1 { server 127.0.0.1:$1; }
    upstream mcp_r2 { server 127.0.0.1:$2; }
    upstream mcp_r3 { server 127.0.0.1:$3; }
    map \$http_last_event_id \$mcp_upstream {
        default     mcp_replicas;
        ~^r1\.      mcp_r1;
        ~^r2\.      mcp_r2;
        ~^r3\.      mcp_r3;
    }
    server {
        listen 127.0.0.1:$edge_port ssl;
        server_name localhost;
        ssl_certificate $tls/server.pem;
        ssl_certificate_key $tls/server.key;
        ssl_protocols TLSv1.2 TLSv1.3;

        location = /mcp {
            proxy_pass http://\$mcp_upstream;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;        # the replicas run with --allow-host localhost
            proxy_buffering off;                 # notifications stream as SSE
            proxy_read_timeout 60s;
            # A replica that refuses the connection is skipped; a request already sent is not
            # replayed (POST is not idempotent), so a call cut short fails instead of running twice.
            proxy_next_upstream error timeout;
        }
        location = /healthz {
            proxy_pass http://mcp_replicas;
        }
    }
}
CONF
    nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" -e "$work/nginx/error.log" &
    pids="$pids $!"
    wait_for_port "$edge_port"
}
