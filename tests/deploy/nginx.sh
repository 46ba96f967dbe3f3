#!/bin/sh
# A tested deployment: nginx terminating TLS (a throwaway CA made here with openssl) in front of
# three `--http` replicas sharing a session key, plain round robin, no stickiness. The official
# Python SDK makes two dozen calls in one session in legacy-session and modern modes; one replica
# is killed mid-session and every remaining call must succeed. Before that, a POST stream closed by
# its replica is resumed through nginx (GET + Last-Event-ID routed to the replica named in the
# event id). The configuration written below is
# the one docs/deploy.md shows. Installs nginx with apt-get when it is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/common.sh"
needs nginx nginx-light
make_ca
start_replicas 3
start_nginx
drive_resumption "https://localhost:$edge_port/mcp"
drive_sdk "https://localhost:$edge_port/mcp"
echo "nginx deployment: ok"
