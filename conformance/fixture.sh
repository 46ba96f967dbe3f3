# Sourced by conformance/run.sh and tests/interop/http.sh: builds the fixtures' binary and starts its conformance fixture server
# over Streamable HTTP on a free loopback port. Sets $url (a localhost URL: the suite's
# DNS-rebinding scenario expects that host name to be accepted) and stops the server on exit.
# Needs $root (the checkout). $FIXTURE_EXTRA_ARGS, if set, is added to the server's arguments.

cargo build --quiet --offline --manifest-path "$root/Cargo.toml" -p agentteams-mcp-fixtures
fixture_log=$(mktemp)
# shellcheck disable=SC2086 # the extra arguments are words
"$root/target/debug/agentteams-mcp-fixtures" --serve-mcp conformance --http --port 0 ${FIXTURE_EXTRA_ARGS:-} \
    2>"$fixture_log" &
fixture_pid=$!
trap 'kill "$fixture_pid" 2>/dev/null; rm -f "$fixture_log"' EXIT INT TERM

# The server prints its address once it is listening.
url=""
for _ in $(seq 1 100); do
    url=$(sed -n 's#.*Streamable HTTP on http://127\.0\.0\.1:\([0-9]*\)/mcp.*#http://localhost:\1/mcp#p' "$fixture_log")
    [ -n "$url" ] && break
    kill -0 "$fixture_pid" 2>/dev/null || break
    sleep 0.1
done
[ -n "$url" ] || { echo "fixture server did not start" >&2; cat "$fixture_log" >&2; exit 1; }
